// Prompt-cache health on live traffic: a turn whose forwarded prefix does not
// extend the previous turn's is counted, by who broke it.
#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;
using J = nlohmann::json;

namespace {

std::string rows(const std::string& salt, std::size_t bytes) {
  std::string s;
  for (int i = 0; s.size() < bytes; ++i) s += salt + " row " + std::to_string(i) + ": ok\n";
  return s;
}

// A chat conversation: after its opening, one tool call and output per
// entry of `outputs`, oldest first.
J conversation(const std::string& opening, const std::vector<std::string>& outputs, bool with_tools = true) {
  J m = J::array({{{"role", "user"}, {"content", opening}}});
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    auto id = "c" + std::to_string(i);
    m.push_back({{"role", "assistant"}, {"tool_calls", {{{"id", id}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}});
    m.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", outputs[i]}});
  }
  J body = {{"model", "gpt-4o"}, {"messages", m}};
  if (with_tools) body["tools"] = {{{"type", "function"}, {"function", {{"name", "run"}}}}};
  return body;
}

std::string breaks(const std::string& cause) {
  return R"(gistproxy_prefix_breaks_total{api="chat",cause=")" + cause + R"(",group="treated"})";
}

}  // namespace

TEST_CASE("prefix breaks: counted by cause on the metric and the request span") {
  mock_upstream upstream;
  auto spans = temp_path("spans.jsonl");
  // read_blob on every request that declares tools: its arrival in case 3 is
  // no plan of the cost model's (under auto it would be, cause="offer").
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", spans.string(), "--inject-read-blob", "always"});
  auto send = [&](const J& body) {
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body.dump()).status == 200);
  };
  // 1. A conversation that only appends, with an offloaded output: no break.
  send(conversation("steady", {rows("a", 60000)}));
  send(conversation("steady", {rows("a", 60000), "small"}));
  // 2. The client rewrites an earlier output itself: the client's break (the
  //    same conversation: the model's first answer, c0, is kept).
  send(conversation("edited", {}));
  send(conversation("edited", {"first version"}));
  send(conversation("edited", {"second version", "more"}));
  // 3. A client that declares no tools: the first offload adds read_blob's
  //    definition, so the tools gistproxy forwards change under a client
  //    that only appended. gistproxy's break.
  send(conversation("no tools", {"small"}, false));
  send(conversation("no tools", {"small", rows("b", 60000)}, false));

  auto all = read_spans_until(spans, [](const auto& s) { return count_named(s, "gistproxy.request") >= 7; });
  // The log is in end order, which a loaded machine's I/O threads do not keep;
  // the requests were sent one after another, so their starts are ordered.
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a["startTimeUnixNano"].template get<std::uint64_t>() < b["startTimeUnixNano"].template get<std::uint64_t>();
  });
  std::vector<std::string> verdicts;
  for (const auto& s : all)
    if (s["name"] == "gistproxy.request") verdicts.push_back(s["attributes"].value("gistproxy.prefix_break", "-"));
  CHECK(verdicts == std::vector<std::string>{"-", "-", "-", "-", "client", "-", "proxy"});
  auto metrics = metrics_with(proxy.admin_port(), {breaks("proxy") + " 1"});
  CHECK(series_value(metrics, breaks("client")) == 1);
  CHECK(series_value(metrics, breaks("proxy")) == 1);
  CHECK(series_value(metrics, breaks("budget")) == 0);
}

TEST_CASE("prefix breaks: budget-mode eviction is its own cause") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--context-budget-tokens", "20000", "--threshold-tokens", "100000"});
  auto send = [&](const J& body) {
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body.dump()).status == 200);
  };
  // Under the budget, everything stays inline; the third output takes the
  // request over it and the oldest outputs are evicted.
  send(conversation("budget", {rows("x", 30000)}));
  send(conversation("budget", {rows("x", 30000), rows("y", 30000)}));
  send(conversation("budget", {rows("x", 30000), rows("y", 30000), rows("z", 30000)}));
  auto metrics = metrics_with(proxy.admin_port(), {breaks("budget") + " 1"});
  CHECK(series_value(metrics, breaks("budget")) == 1);
  CHECK(series_value(metrics, breaks("proxy")) == 0);
  CHECK(series_value(metrics, breaks("client")) == 0);
}

TEST_CASE("prefix breaks: an age-aware batch is its own cause, and only batches break the prefix") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always", "--age-gate", "tokens",
                       "--age-trigger-tokens", "3000", "--age-keep-tokens", "1000", "--age-step-tokens", "2000",
                       "--age-threshold-tokens", "100"});
  // Twelve turns, each adding an output of ~600 tokens (under the 2,500
  // threshold): past 3,000 tokens the older ones go, one batch per 2,000.
  std::vector<std::string> outputs;
  for (int turn = 0; turn < 12; ++turn) {
    outputs.push_back(rows("o" + std::to_string(turn), 2400));
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", conversation("aging", outputs).dump()).status == 200);
  }
  auto metrics = metrics_with(proxy.admin_port(), {breaks("age") + " "});
  const auto age = series_value(metrics, breaks("age"));
  CHECK(age >= 2);
  CHECK(age <= 6);  // at most one per step: the conversation grows ~8,000 tokens past the trigger
  CHECK(series_value(metrics, breaks("proxy")) == 0);
  CHECK(series_value(metrics, breaks("client")) == 0);
}
