// A proxy whose upstream leads back into itself refuses the request when it
// comes around (508, its own Via entry), instead of nesting requests until
// descriptors run out; gistproxies chained one behind another (wrap through
// a gateway that is a gistproxy) still forward, each adding its own entry.
#include <catch2/catch.hpp>
#include <regex>
#include <set>

#include "tests/integration/harness.hpp"
#include "tests/support/raw_upstream.hpp"
#include "tests/support/tcp_relay.hpp"

using namespace gistproxy::testing;

namespace {

const std::string messages_body =
    R"({"model":"claude-x","max_tokens":16,"messages":[{"role":"user","content":"hello"}]})";
const std::map<std::string, std::string> anthropic_headers = {{"x-api-key", "sk-ant-test"},
                                                              {"anthropic-version", "2023-06-01"},
                                                              {"content-type", "application/json"}};

// The gistproxy pseudonyms of a request head's Via fields, in order.
std::vector<std::string> via_pseudonyms(const std::string& head) {
  static const std::regex via(R"((?:^|\r\n)[Vv][Ii][Aa]:([^\r\n]*))");
  static const std::regex entry(R"(1\.1 (gistproxy-[0-9a-f]{16}))");
  std::vector<std::string> out;
  for (std::sregex_iterator f(head.begin(), head.end(), via), end; f != end; ++f) {
    const std::string value = (*f)[1];
    for (std::sregex_iterator e(value.begin(), value.end(), entry); e != end; ++e) out.push_back((*e)[1]);
  }
  return out;
}

}  // namespace

TEST_CASE("a proxy whose upstream leads back into itself answers 508 once, and keeps serving") {
  mock_upstream openai;
  // The relay stands for a gateway in front of the proxy; it relays at most
  // 20 connections, so a proxy that misses the loop fails here, not the machine.
  tcp_relay gateway(20);
  proxy_process proxy({"--anthropic-upstream", gateway.url(), "--upstream", openai.url()});
  gateway.point_at(proxy.port());

  auto looped = http_request(proxy.port(), "POST", "/v1/messages", messages_body, anthropic_headers);
  CHECK(looped.status == 508);
  CHECK(looped.headers["x-gistproxy-error"] == "loop_detected");
  CHECK(looped.body.find("came back to the gistproxy that forwarded it") != std::string::npos);
  CHECK(looped.body.find("sk-ant-test") == std::string::npos);
  // One pass forwarded it, the second refused it: one connection through the gateway.
  CHECK(gateway.connections() == 1);
  // The refusing pass finishes after its 508 is written, and the forwarding
  // pass counts the upstream's 508 too: wait for the refusal's own series.
  const auto metrics = metrics_with(
      proxy.admin_port(), {R"(gistproxy_errors_total{source="internal",type="loop_detected",group="treated"})"});
  CHECK(series_value(metrics, R"(gistproxy_errors_total{source="internal",type="loop_detected",group="treated"})") == 1);

  // The next request, to an upstream that is not the proxy itself, is served.
  auto next = http_request(proxy.port(), "POST", "/v1/chat/completions",
                           R"({"model":"gpt-x","messages":[{"role":"user","content":"hi"}]})",
                           {{"authorization", "Bearer sk-test"}, {"content-type", "application/json"}});
  CHECK(next.status == 200);
  CHECK(gateway.connections() == 1);
}

TEST_CASE("gistproxies chained one behind another each forward, each adding its own Via entry after the client's") {
  raw_upstream upstream({{raw_upstream::response(R"({"ok":true})")}});
  proxy_process inner({"--upstream", upstream.url()});
  proxy_process outer({"--upstream", "http://127.0.0.1:" + std::to_string(inner.port())});
  auto res = http_request(outer.port(), "POST", "/v1/chat/completions", R"({"model":"gpt-x","messages":[]})",
                          {{"authorization", "Bearer sk-test"}, {"via", "1.1 corporate-proxy"}});
  CHECK(res.status == 200);
  REQUIRE(upstream.heads().size() == 1);
  const auto head = upstream.heads()[0];
  const auto seen = via_pseudonyms(head);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] != seen[1]);  // two processes, two pseudonyms: neither is a loop
  // The client's own entry stays first: the list is in the order of the hops.
  CHECK(head.find("corporate-proxy") < head.find(seen[0]));
  CHECK(head.find(seen[0]) < head.find(seen[1]));
}
