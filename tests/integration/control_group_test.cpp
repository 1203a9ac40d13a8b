// --control-percent: a stable share of conversations goes upstream untouched
// (no offload, no read_blob), and every request metric and span says which
// group it belongs to.
#include <zlib.h>

#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;

namespace {

std::string big_output(std::size_t bytes) {
  std::string s;
  for (int i = 0; s.size() < bytes; ++i) s += "row " + std::to_string(i) + ": checksum=" + std::to_string(i * 7919 % 10007) + "\n";
  return s;
}

// One turn of conversation `name`: its opening, a tool call and a large
// output, and (turn 2) one more exchange.
std::string chat_turn(const std::string& name, int turn) {
  nlohmann::json messages = {{{"role", "user"}, {"content", "conversation " + name}},
                             {{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"},
                                                                       {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}},
                             {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", big_output(60000)}}};
  if (turn > 1) {
    messages.push_back({{"role", "assistant"}, {"content", "done"}});
    messages.push_back({{"role", "user"}, {"content", "and then?"}});
  }
  return nlohmann::json{{"model", "gpt-4o"}, {"messages", messages},
                        {"tools", {{{"type", "function"}, {"function", {{"name", "run"}}}}}}}
      .dump();
}

std::string gzip(const std::string& body) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string gz(deflateBound(&zs, uLong(body.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  zs.avail_in = uInt(body.size());
  zs.next_out = reinterpret_cast<Bytef*>(gz.data());
  zs.avail_out = uInt(gz.size());
  deflate(&zs, Z_FINISH);
  gz.resize(zs.total_out);
  deflateEnd(&zs);
  return gz;
}

}  // namespace

TEST_CASE("control group: its conversations reach the upstream byte for byte, without read_blob, counted as control") {
  mock_upstream upstream;
  auto spans = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--control-percent", "100", "--span-log", spans.string()});
  const auto body = chat_turn("alpha", 1);
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body).status == 200);
  auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == body);
  CHECK(seen[0].find("read_blob") == std::string::npos);

  auto all = read_spans_until(spans, [](const auto& s) { return count_named(s, "gistproxy.request") >= 1; });
  REQUIRE(count_named(all, "gistproxy.request") == 1);
  CHECK(count_named(all, "compaction") == 0);
  std::size_t labelled = 0;
  for (const auto& s : all)
    if (s["name"] == "gistproxy.request" || s["kind"] == "client") {
      CHECK(s["attributes"]["gistproxy.group"] == "control");
      ++labelled;
    }
  CHECK(labelled >= 2);  // the request span and its upstream hop's client span
  const std::string line = R"(gistproxy_requests_total{api="chat",status="200",group="control",protocol="HTTP/1.1"} 1)";
  auto metrics = metrics_with(proxy.admin_port(), {line});
  CHECK(metrics.find(line) != std::string::npos);
  CHECK(metrics.find(R"(gistproxy_input_tokens_total{api="chat",group="control"} 100)") != std::string::npos);
  CHECK(metrics.find(R"(gistproxy_offloads_total{api="chat")") == std::string::npos);
}

TEST_CASE("control group: a compressed body goes upstream as sent, Content-Encoding included") {
  raw_upstream upstream({{raw_upstream::response(R"({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}})")}});
  proxy_process proxy({"--upstream", upstream.url(), "--control-percent", "100"});
  const auto gz = gzip(chat_turn("beta", 1));
  REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", gz, {{"Content-Encoding", "gzip"}}).status == 200);
  REQUIRE(upstream.bodies().size() == 1);
  CHECK(upstream.bodies()[0] == gz);
  auto head = upstream.heads().at(0);
  for (auto& c : head) c = char(std::tolower(static_cast<unsigned char>(c)));
  CHECK(head.find("\r\ncontent-encoding: gzip\r\n") != std::string::npos);
}

TEST_CASE("control group: membership is stable per conversation and splits conversations by the percentage") {
  mock_upstream upstream;
  auto spans = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--control-percent", "50", "--span-log", spans.string()});
  const int conversations = 12;
  for (int turn = 1; turn <= 2; ++turn)
    for (int c = 0; c < conversations; ++c)
      REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", chat_turn(std::to_string(c), turn)).status == 200);
  auto all = read_spans_until(spans, [&](const auto& s) { return count_named(s, "gistproxy.request") >= 2 * conversations; });
  std::map<std::string, std::set<std::string>> groups_by_trace;
  for (const auto& s : all)
    if (s["name"] == "gistproxy.request") groups_by_trace[s["traceId"]].insert(s["attributes"]["gistproxy.group"]);
  REQUIRE(groups_by_trace.size() == std::size_t(conversations));
  std::map<std::string, int> conversations_in;
  for (const auto& [trace, groups] : groups_by_trace) {
    CHECK(groups.size() == 1);  // both turns in one group
    ++conversations_in[*groups.begin()];
  }
  // The trace ids derive from the conversations' openings, so this split is
  // the same on every run.
  CHECK(conversations_in["control"] > 0);
  CHECK(conversations_in["treated"] > 0);
  // What the upstream saw matches each request's group.
  auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == std::size_t(2 * conversations));
  int untouched = 0;
  for (int turn = 1, i = 0; turn <= 2; ++turn)
    for (int c = 0; c < conversations; ++c, ++i) {
      const bool offloaded = seen[std::size_t(i)].find("read_blob") != std::string::npos;
      untouched += seen[std::size_t(i)] == chat_turn(std::to_string(c), turn);
      CHECK(offloaded != (seen[std::size_t(i)] == chat_turn(std::to_string(c), turn)));
    }
  CHECK(untouched == 2 * conversations_in["control"]);
}
