// Per-request control headers through the real binary: x-gistproxy-bypass
// forwards a request untouched (and is counted), x-gistproxy-threshold sets
// one request's threshold only where --allow-request-overrides allows it;
// neither ever reaches the upstream, and a value gistproxy cannot honour is
// a 400 that says why (and never reaches the upstream either).
#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;
using njson = nlohmann::json;

namespace {

// About 1,500 tokens: below the default threshold (2,500), above 200.
std::string medium_output() {
  std::string s;
  for (int i = 0; s.size() < 6 * 1024; ++i) s += "build step " + std::to_string(i) + ": compiled module_" + std::to_string(i) + "\n";
  return s;
}

bool offloaded(const std::string& forwarded) { return forwarded.find("read_blob(\\\"") != std::string::npos; }

bool no_control_headers(const std::map<std::string, std::string>& h) {
  return !h.contains("x-gistproxy-bypass") && !h.contains("x-gistproxy-threshold");
}

}  // namespace

TEST_CASE("x-gistproxy-bypass: 1 sends the request upstream untouched, counted, the header stripped") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  const auto body = request_for("chat", "find the needle", haystack()).dump();
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", body,
                          {{"Authorization", "Bearer sk-a"}, {"x-gistproxy-bypass", "1"}});
  REQUIRE(res.status == 200);
  CHECK(answer_text("chat", njson::parse(res.body)) == "found: no needle found");  // the model saw no reference
  REQUIRE(upstream.llm_bodies().size() == 1);
  CHECK(upstream.llm_bodies()[0] == body);  // byte for byte
  CHECK(no_control_headers(upstream.llm_headers()[0]));
  const std::string counted = "gistproxy_rewrite_failures_total{api=\"chat\",reason=\"bypass\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {counted}).find(counted) != std::string::npos);

  // 0 means "do not bypass": the same request is offloaded as usual.
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body,
                       {{"Authorization", "Bearer sk-a"}, {"x-gistproxy-bypass", "0"}})
              .status == 200);
  REQUIRE(upstream.llm_bodies().size() >= 2);
  CHECK(offloaded(upstream.llm_bodies()[1]));
  CHECK(no_control_headers(upstream.llm_headers()[1]));
}

TEST_CASE("x-gistproxy-threshold applies within the range the operator allows, and never reaches the upstream") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--allow-request-overrides", "100-5000", "--inject-read-blob", "always"});
  const auto body = request_for("chat", "hello", medium_output()).dump();
  const std::map<std::string, std::string> key = {{"Authorization", "Bearer sk-a"}};
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body, key).status == 200);
  auto with = key;
  with["x-gistproxy-threshold"] = "200";
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body, with).status == 200);
  auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  CHECK_FALSE(offloaded(seen[0]));  // the default threshold keeps it inline
  CHECK(offloaded(seen[1]));        // this request's own threshold offloads it
  CHECK(no_control_headers(upstream.llm_headers()[1]));
}

TEST_CASE("control headers gistproxy cannot honour are a 400 that says why, and nothing goes upstream") {
  mock_upstream upstream;
  proxy_process strict({"--upstream", upstream.url()});
  proxy_process allowing({"--upstream", upstream.url(), "--allow-request-overrides", "100-5000"});
  const auto body = request_for("chat", "hello", "short").dump();
  struct refusal {
    const proxy_process& proxy;
    std::string header, value, reason;
  };
  const std::vector<refusal> cases = {
      {strict, "x-gistproxy-threshold", "1000", "--allow-request-overrides"},
      {allowing, "x-gistproxy-threshold", "50", "100-5000"},
      {allowing, "x-gistproxy-threshold", "abc", "whole number"},
      {allowing, "x-gistproxy-threshold", "-1", "whole number"},
      {allowing, "x-gistproxy-bypass", "yes", "x-gistproxy-bypass must be 1"},
  };
  for (const auto& c : cases) {
    INFO(c.header << ": " << c.value);
    auto res = http_request(c.proxy.port(), "POST", "/v1/chat/completions", body,
                            {{"Authorization", "Bearer sk-a"}, {c.header, c.value}});
    CHECK(res.status == 400);
    auto j = njson::parse(res.body, nullptr, false);
    REQUIRE(j.is_object());
    CHECK(j["error"]["message"].get<std::string>().find(c.reason) != std::string::npos);
  }
  CHECK(upstream.llm_bodies().empty());
}

TEST_CASE("the --allow-request-overrides flag takes off or LOW-HIGH") {
  for (const char* bad : {"on", "5000-100", "x-y", "100", "-5"}) {
    INFO(bad);
    auto r = run_command({gistproxy_binary(), "serve", "--allow-request-overrides", bad});
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--allow-request-overrides") != std::string::npos);
  }
}

TEST_CASE("each request span says how receive decided its body may be handled and why") {
  mock_upstream upstream;
  auto log = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", log.string()});
  const auto body = request_for("chat", "hello", "a short output").dump();
  const std::map<std::string, std::string> key = {{"Authorization", "Bearer sk-a"}};
  auto bypassed = key;
  bypassed["x-gistproxy-bypass"] = "1";
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body, key).status == 200);
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body, bypassed).status == 200);
  REQUIRE(http_request(proxy.port(), "POST", "/echo", "{}").status == 200);  // no API's path
  std::multiset<std::string> whys;
  for (const auto& s : read_spans_until(log, [](const auto& all) { return count_named(all, "gistproxy.request") >= 3; }))
    if (s["name"] == "gistproxy.request") whys.insert(s["attributes"]["gistproxy.handling"].get<std::string>());
  CHECK(whys == std::multiset<std::string>{"bypass", "offload", "unknown_api"});
}
