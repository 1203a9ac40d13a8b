#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

std::vector<nlohmann::json> named(const std::vector<nlohmann::json>& spans, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (auto& s : spans)
    if (s["name"] == name) out.push_back(s);
  return out;
}

}  // namespace

TEST_CASE("the span log shows a request span and its upstream span with GenAI attributes") {
  mock_upstream upstream;
  auto log = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", log.string()});
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions",
                          R"({"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}]})");
  REQUIRE(res.status == 200);
  auto spans = read_spans(log, 2);
  REQUIRE(spans.size() == 2);
  auto request = named(spans, "gistproxy.request").at(0);
  auto up = named(spans, "chat gpt-4o").at(0);
  CHECK(request["kind"] == "server");
  CHECK(up["kind"] == "client");
  CHECK(up["traceId"] == request["traceId"]);
  CHECK(up["parentSpanId"] == request["spanId"]);
  CHECK(request["attributes"]["gen_ai.request.model"] == "gpt-4o");
  CHECK(request["attributes"]["http.response.status_code"] == 200);
  CHECK(up["attributes"]["gen_ai.provider.name"] == "openai");
  CHECK(up["attributes"]["gen_ai.usage.input_tokens"] == 100);
  CHECK(up["attributes"]["gen_ai.usage.output_tokens"] == 10);
  CHECK(up["endTimeUnixNano"].get<std::uint64_t>() >= up["startTimeUnixNano"].get<std::uint64_t>());
}

TEST_CASE("turns of one conversation share a trace id and a traceparent header wins") {
  mock_upstream upstream;
  auto log = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", log.string()});
  http_request(proxy.port(), "POST", "/v1/chat/completions",
               R"({"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"}]})");
  http_request(proxy.port(), "POST", "/v1/chat/completions",
               R"({"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"Q1"},
                   {"role":"assistant","content":"A1"},{"role":"user","content":"Q2"}]})");
  http_request(proxy.port(), "POST", "/v1/chat/completions",
               R"({"model":"m","messages":[{"role":"user","content":"another conversation"}]})");
  auto echo = http_request(proxy.port(), "POST", "/echo", "{}",
                           {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}});
  auto spans = named(read_spans_until(log, [](const auto& all) { return count_named(all, "gistproxy.request") >= 4; }),
                     "gistproxy.request");
  REQUIRE(spans.size() == 4);
  // The log has spans in the order they ended, which two I/O threads do not
  // keep; the requests were sent one after another, so their starts are ordered.
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
    return a["startTimeUnixNano"].template get<std::uint64_t>() < b["startTimeUnixNano"].template get<std::uint64_t>();
  });
  CHECK(spans[0]["traceId"] == spans[1]["traceId"]);
  CHECK(spans[0]["traceId"] != spans[2]["traceId"]);
  CHECK(spans[3]["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(spans[3]["parentSpanId"] == "00f067aa0ba902b7");
  // The upstream sees the trace continued from the proxy's upstream span.
  auto forwarded = nlohmann::json::parse(echo.body)["headers"]["traceparent"].get<std::string>();
  CHECK(forwarded.rfind("00-4bf92f3577b34da6a3ce929d0e0e4736-", 0) == 0);
  CHECK(forwarded.find("00f067aa0ba902b7") == std::string::npos);
}

TEST_CASE("spans are exported as OTLP/HTTP JSON with the configured service name") {
  mock_upstream upstream;
  mock_upstream collector;
  proxy_process proxy({"--upstream", upstream.url()},
                      {"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.url(), "OTEL_SERVICE_NAME=agents-gateway"});
  http_request(proxy.port(), "POST", "/v1/chat/completions", R"({"model":"m","messages":[]})");
  proxy.stop();  // flushes the exporter
  auto posts = collector.otlp_posts();
  REQUIRE_FALSE(posts.empty());
  auto j = nlohmann::json::parse(posts[0]);
  auto& rs = j["resourceSpans"][0];
  CHECK(rs["resource"]["attributes"][0]["value"]["stringValue"] == "agents-gateway");
  auto& spans = rs["scopeSpans"][0]["spans"];
  REQUIRE(spans.size() >= 2);
  CHECK(spans[0]["traceId"].get<std::string>().size() == 32);
  CHECK(spans[0]["startTimeUnixNano"].is_string());
  CHECK(spans[0]["kind"].is_number_integer());
}

TEST_CASE("/metrics is valid Prometheus text and counts requests, and health endpoints answer") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  for (int i = 0; i < 3; ++i) http_request(proxy.port(), "POST", "/v1/chat/completions", R"({"model":"m","messages":[]})");
  http_request(proxy.port(), "POST", "/v1/messages", R"({"model":"m","messages":[]})");
  http_request(proxy.port(), "GET", "/nowhere");  // mock: 404
  auto requests = [](const std::string& api, const std::string& status, int n) {
    return "gistproxy_requests_total{api=\"" + api + "\",status=\"" + status +
           "\",group=\"treated\",protocol=\"HTTP/1.1\"} " + std::to_string(n);
  };
  metrics_with(proxy.admin_port(), {requests("other", "404", 1), requests("messages", "200", 1),
                                    "gistproxy_proxy_overhead_seconds_count{api=\"chat\",group=\"treated\"} 3"});
  auto metrics = http_request(proxy.admin_port(), "GET", "/metrics");
  REQUIRE(metrics.status == 200);
  CHECK(metrics.headers["content-type"].rfind("text/plain; version=0.0.4", 0) == 0);
  CHECK(prometheus_text_problem(metrics.body) == "");
  CHECK(metrics.body.find(requests("chat", "200", 3)) != std::string::npos);
  CHECK(metrics.body.find(requests("messages", "200", 1)) != std::string::npos);
  CHECK(metrics.body.find(requests("other", "404", 1)) != std::string::npos);
  CHECK(metrics.body.find("gistproxy_proxy_overhead_seconds_count{api=\"chat\",group=\"treated\"} 3") != std::string::npos);
  CHECK(http_request(proxy.admin_port(), "GET", "/healthz").status == 200);
  CHECK(http_request(proxy.admin_port(), "GET", "/readyz").status == 200);
  CHECK(http_request(proxy.admin_port(), "GET", "/nope").status == 404);
}

TEST_CASE("the access log has one JSON line per request without credentials") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  http_request(proxy.port(), "POST", "/v1/chat/completions?key=secret-in-query",
               R"({"model":"gpt-4o","messages":[{"role":"user","content":"my secret prompt"}]})",
               {{"Authorization", "Bearer sk-very-secret"}});
  proxy.stop();
  auto log = proxy.log();
  auto pos = log.find("\"msg\":\"access\"");
  REQUIRE(pos != std::string::npos);
  auto line = log.substr(log.rfind('\n', pos) + 1);
  line = line.substr(0, line.find('\n'));
  auto j = nlohmann::json::parse(line);
  CHECK(j["path"] == "/v1/chat/completions");
  CHECK(j["model"] == "gpt-4o");
  CHECK(j["status"] == 200);
  CHECK(j["trace_id"].get<std::string>().size() == 32);
  CHECK(log.find("sk-very-secret") == std::string::npos);
  CHECK(log.find("my secret prompt") == std::string::npos);
  CHECK(log.find("secret-in-query") == std::string::npos);
}

TEST_CASE("prompt-cache tokens reach the spans and gistproxy_prompt_cache_tokens_total for every API") {
  // The mock reports, per hop, 100 input tokens of which 64 were read from the
  // cache (Anthropic: 20 uncached + 16 written + 64 read).
  mock_upstream upstream;
  auto log = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", log.string()});
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions",
                       R"({"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}]})").status == 200);
  REQUIRE(http_request(proxy.port(), "POST", "/v1/messages",
                       R"({"model":"claude-sonnet-4-5","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"Hi"}]})",
                       {{"x-api-key", "k"}}).status == 200);
  auto spans = read_spans_until(log, [](const auto& all) { return count_named(all, "gistproxy.request") >= 2; });
  auto requests = named(spans, "gistproxy.request");
  REQUIRE(requests.size() == 2);
  auto& chat = requests[0]["attributes"];
  CHECK(chat["gen_ai.usage.input_tokens"] == 100);
  CHECK(chat["gen_ai.usage.cache_read.input_tokens"] == 64);
  CHECK_FALSE(chat.contains("gen_ai.usage.cache_write.input_tokens"));  // OpenAI reports no writes
  auto& messages = requests[1]["attributes"];
  CHECK(messages["gen_ai.usage.input_tokens"] == 100);
  CHECK(messages["gen_ai.usage.cache_read.input_tokens"] == 64);
  CHECK(messages["gen_ai.usage.cache_write.input_tokens"] == 16);
  CHECK_FALSE(messages.contains("gen_ai.usage.cache_creation.input_tokens"));  // the name it replaced
  auto up = named(spans, "chat gpt-4o").at(0);
  CHECK(up["attributes"]["gen_ai.usage.cache_read.input_tokens"] == 64);

  std::vector<std::string> expected = {
      R"(gistproxy_prompt_cache_tokens_total{api="chat",kind="read",group="treated"} 64)",
      R"(gistproxy_prompt_cache_tokens_total{api="chat",kind="uncached",group="treated"} 36)",
      R"(gistproxy_prompt_cache_tokens_total{api="chat",kind="write",group="treated"} 0)",
      R"(gistproxy_prompt_cache_tokens_total{api="messages",kind="read",group="treated"} 64)",
      R"(gistproxy_prompt_cache_tokens_total{api="messages",kind="write",group="treated"} 16)",
      R"(gistproxy_prompt_cache_tokens_total{api="messages",kind="uncached",group="treated"} 20)"};
  auto metrics = metrics_with(proxy.admin_port(), expected);
  for (const auto& line : expected) CHECK(metrics.find(line) != std::string::npos);
}
