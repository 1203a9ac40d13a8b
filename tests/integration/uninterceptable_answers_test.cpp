// Answers gistproxy cannot follow: a Gemini stream without alt=sse (one JSON
// array) and a Responses background request (polled later with GET). They are
// forwarded untouched — nothing offloaded, read_blob never offered — and
// counted, so a read_blob call can never reach the client through them.
#include <catch2/catch.hpp>

#include "tests/support/api_scenarios.hpp"
#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

TEST_CASE("requests whose answers gistproxy cannot follow go upstream untouched and are counted") {
  auto [api, target] = GENERATE(table<std::string, std::string>({
      {"gemini", "/v1beta/models/gemini-2.5-flash:streamGenerateContent"},
      {"responses", "/v1/responses"},
  }));
  CAPTURE(api);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto req = request_for(api, "hello", haystack());
  if (api == "responses") req["background"] = true;
  const std::string sent = req.dump();
  http_request(proxy.port(), "POST", target, sent, key_header(api));

  REQUIRE(upstream.llm_bodies().size() == 1);
  CHECK(upstream.llm_bodies()[0] == sent);  // no reference, no read_blob definition
  const std::string series =
      "gistproxy_rewrite_failures_total{api=\"" + api + "\",reason=\"uninterceptable_answer\"}";
  auto metrics = metrics_with(proxy.admin_port(), {series + " 1"});
  CHECK(series_value(metrics, series) == 1);
}
