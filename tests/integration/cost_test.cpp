// Dollars on live traffic: the upstream's usage priced by the table, what
// offloading saved and added, and models the table does not know.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

std::string chat_body(const std::string& model, const std::string& tool_output) {
  return nlohmann::json{{"model", model},
                        {"messages", {{{"role", "user"}, {"content", "price me"}},
                                      {{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"},
                                                                                {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}},
                                      {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", tool_output}}}},
                        {"tools", {{{"type", "function"}, {"function", {{"name", "run"}}}}}}}
      .dump();
}

std::string rows(std::size_t bytes) {
  std::string s;
  for (int i = 0; s.size() < bytes; ++i) s += "row " + std::to_string(i) + " ok\n";
  return s;
}

}  // namespace

TEST_CASE("cost: a priced model's usage becomes USD by kind of token, on the metric and the span") {
  mock_upstream upstream;
  auto spans = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", spans.string()});
  // gpt-4o: $2.50 input, $1.25 cached, $10 output per million; the mock
  // reports 100 input tokens (64 cached) and 10 output tokens.
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body("gpt-4o-2024-08-06", "small")).status == 200);
  const std::string output = R"(gistproxy_cost_usd_total{api="chat",kind="output",group="treated"})";
  auto metrics = metrics_with(proxy.admin_port(), {output + " 0.0001"});
  CHECK(series_value(metrics, R"(gistproxy_cost_usd_total{api="chat",kind="input",group="treated"})") == Approx(36 * 2.5e-6));
  CHECK(series_value(metrics, R"(gistproxy_cost_usd_total{api="chat",kind="cache_read",group="treated"})") ==
        Approx(64 * 1.25e-6));
  CHECK(series_value(metrics, R"(gistproxy_cost_usd_total{api="chat",kind="cache_write",group="treated"})") == 0);
  CHECK(series_value(metrics, output) == Approx(10 * 10e-6));
  CHECK(series_value(metrics, R"(gistproxy_unpriced_requests_total{api="chat",group="treated"})") == 0);
  CHECK(series_value(metrics, R"(gistproxy_estimated_price_requests_total{api="chat",group="treated"})") == 0);  // listed
  auto all = read_spans_until(spans, [](const auto& s) { return count_named(s, "gistproxy.request") >= 1; });
  const auto requests = spans_named(all, "gistproxy.request");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0]["attributes"]["gistproxy.cost_usd"].get<double>() == Approx(0.00027));
}

TEST_CASE("cost: a model with no price is counted as unpriced, never as $0") {
  mock_upstream upstream;
  auto spans = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", spans.string()});
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body("local-llama-70b", "small")).status == 200);
  const std::string unpriced = R"(gistproxy_unpriced_requests_total{api="chat",group="treated"} 1)";
  auto metrics = metrics_with(proxy.admin_port(), {unpriced});
  CHECK(metrics.find(unpriced) != std::string::npos);
  CHECK(series_value(metrics, R"(gistproxy_cost_usd_total{api="chat",kind="output",group="treated"})") == 0);
  auto all = read_spans_until(spans, [](const auto& s) { return count_named(s, "gistproxy.request") >= 1; });
  const auto requests = spans_named(all, "gistproxy.request");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0]["attributes"]["gistproxy.priced"] == false);
  CHECK_FALSE(requests[0]["attributes"].contains("gistproxy.cost_usd"));
}

TEST_CASE("cost: a model the table does not list is priced as its family and its span names the entry used") {
  mock_upstream upstream;
  auto spans = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", spans.string()});
  // gpt-5.9-mini is listed nowhere: priced as gpt-5.4-mini ($0.75 input,
  // $0.075 cached, $4.50 output per million), an estimate the span says.
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body("gpt-5.9-mini-2026-12-01", "small")).status == 200);
  const std::string output = R"(gistproxy_cost_usd_total{api="chat",kind="output",group="treated"})";
  auto metrics = metrics_with(proxy.admin_port(), {output + " 0.0000"});
  CHECK(series_value(metrics, output) == Approx(10 * 4.5e-6));
  CHECK(series_value(metrics, R"(gistproxy_unpriced_requests_total{api="chat",group="treated"})") == 0);
  // Counted, so an operator sees what share of the dollars is estimated.
  CHECK(series_value(metrics, R"(gistproxy_estimated_price_requests_total{api="chat",group="treated"})") == 1);
  auto all = read_spans_until(spans, [](const auto& s) { return count_named(s, "gistproxy.request") >= 1; });
  const auto requests = spans_named(all, "gistproxy.request");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0]["attributes"]["gistproxy.priced_as"] == "gpt-5.4-mini");
  CHECK(requests[0]["attributes"]["gistproxy.cost_usd"].get<double>() == Approx(36 * 0.75e-6 + 64 * 0.075e-6 + 10 * 4.5e-6));
}

TEST_CASE("cost: offloading's savings and overhead are priced at the model's input price") {
  mock_upstream upstream;
  auto spans = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", spans.string()});
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body("gpt-4.1", rows(80000))).status == 200);
  auto all = read_spans_until(spans, [](const auto& s) { return count_named(s, "gistproxy.request") >= 1; });
  std::int64_t tokens_saved = 0;
  double net = 0;
  for (const auto& s : all)
    if (s["name"] == "gistproxy.request") {
      tokens_saved = s["attributes"]["gistproxy.tokens_saved"].get<std::int64_t>();
      net = s["attributes"]["gistproxy.saved_usd"].get<double>();
    }
  REQUIRE(tokens_saved > 10000);
  auto metrics = metrics_with(proxy.admin_port(), {R"(gistproxy_saved_usd_total{api="chat"} 0.0)"});
  const double saved = series_value(metrics, R"(gistproxy_saved_usd_total{api="chat"})");
  const double definition = series_value(metrics, R"(gistproxy_offload_overhead_usd_total{api="chat",kind="read_blob_definition"})");
  CHECK(saved == Approx(double(tokens_saved) * 2.0e-6));  // gpt-4.1: $2 per million input tokens
  CHECK(definition > 0);           // read_blob was added to the tools
  CHECK(definition < saved / 10);  // and costs far less than the offload saves
  CHECK(net == Approx(saved - definition));
}

TEST_CASE("cost: --prices replaces the built-in table, and a table that does not load stops the start") {
  auto table = temp_path("prices.json");
  std::ofstream(table) << R"({"date":"2026-11-24","models":[{"match":"house-model","input":1,"cache_read":0.5,"output":2}]})";
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--prices", table.string()});
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body("house-model-v2", "small")).status == 200);
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body("gpt-4o", "small")).status == 200);
  const std::string unpriced = R"(gistproxy_unpriced_requests_total{api="chat",group="treated"} 1)";  // gpt-4o is not in it
  auto metrics = metrics_with(proxy.admin_port(), {unpriced});
  CHECK(metrics.find(unpriced) != std::string::npos);
  CHECK(series_value(metrics, R"(gistproxy_cost_usd_total{api="chat",kind="output",group="treated"})") == Approx(10 * 2e-6));

  auto broken = temp_path("broken-prices.json");
  std::ofstream(broken) << R"({"models":[{"match":"m","input":-1,"output":1}]})";
  std::string cmd = std::string(gistproxy_binary()) + " serve --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --prices " +
                    broken.string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  CHECK(WEXITSTATUS(status) != 0);
  CHECK(out.find("--prices") != std::string::npos);
  CHECK(out.find("non-negative") != std::string::npos);
}
