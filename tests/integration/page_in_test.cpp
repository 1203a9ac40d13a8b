#include <catch2/catch.hpp>
#include <fstream>
#include <map>

#include "tests/support/api_scenarios.hpp"
#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

struct stack {
  mock_upstream upstream;
  std::filesystem::path spans = temp_path("spans.jsonl");
  proxy_process proxy;
  explicit stack(std::vector<std::string> extra = {})
      : proxy([&] {
          std::vector<std::string> a{"--upstream", upstream.url(), "--span-log", spans.string()};
          a.insert(a.end(), extra.begin(), extra.end());
          return a;
        }()) {}
  http_result ask(const std::string& api, const std::string& question, const std::string& output) {
    return http_request(proxy.port(), "POST", path_for(api), request_for(api, question, output).dump(), key_header(api));
  }
};

}  // namespace

TEST_CASE("a line buried in an offloaded 200 KB output comes back through one read_blob call") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto res = s.ask(api, "find the needle", haystack());
  REQUIRE(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);  // the client never sees it
  auto j = nlohmann::json::parse(res.body);
  CHECK(answer_text(api, j) == "found: 2501: config line 2500: NEEDLE secret_port=48213");
  // Usage is summed over both hops (the mock reports 100 in / 10 out per hop;
  // of the 100, 64 read from the prompt cache, and for Anthropic, whose
  // input_tokens count only the uncached rest, 16 written and 20 uncached).
  auto& u = j[api == "gemini" ? "usageMetadata" : "usage"];
  if (api == "messages") {
    CHECK(u.value("input_tokens", 0) == 40);
    CHECK(u.value("cache_read_input_tokens", 0) == 128);
    CHECK(u.value("cache_creation_input_tokens", 0) == 32);
  } else {
    CHECK(u.value(api == "chat" ? "prompt_tokens" : api == "gemini" ? "promptTokenCount" : "input_tokens", 0) == 200);
  }
  CHECK(u.value(api == "chat" ? "completion_tokens" : api == "gemini" ? "candidatesTokenCount" : "output_tokens", 0) == 20);

  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].find("NEEDLE secret_port=48213") != std::string::npos);  // the page-in went upstream
  auto tools = [](const std::string& b) { return nlohmann::json::parse(b)["tools"].dump(); };
  CHECK(tools(seen[0]) == tools(seen[1]));
  auto t0 = seen[0].substr(seen[0].find("\"tools\""));
  CHECK(seen[1].find(t0.substr(0, t0.find(']') + 1)) != std::string::npos);  // byte-identical tools prefix

  auto spans = read_spans_until(s.spans, [](const auto& all) {
    std::size_t clients = 0;
    for (auto& sp : all) clients += sp["kind"] == "client";
    return count_named(all, "page_in") >= 1 && count_named(all, "compaction") >= 1 && clients >= 2 &&
           count_named(all, "gistproxy.request") >= 1;
  });
  std::set<std::string> traces;
  int compactions = 0, page_ins = 0, upstreams = 0;
  for (auto& sp : spans) {
    traces.insert(sp["traceId"]);
    if (sp["name"] == "compaction") ++compactions;
    if (sp["name"] == "page_in") {
      ++page_ins;
      CHECK(sp["attributes"]["gistproxy.integrity_ok"] == true);
      CHECK(sp["attributes"]["gistproxy.mode"] == "pattern");
      CHECK(sp["attributes"]["gistproxy.churn"] == 0);  // offloaded and paged back in the same turn
      // The OpenTelemetry GenAI conventions' tool execution, joined to its conversation.
      CHECK(sp["attributes"]["gen_ai.operation.name"] == "execute_tool");
      CHECK(sp["attributes"]["gen_ai.tool.name"] == "read_blob");
      CHECK(sp["attributes"]["gistproxy.tool"] == "cat");
      CHECK(sp["attributes"]["gen_ai.conversation.id"].get<std::string>().size() == 32);
    }
    if (sp["name"] == "compaction" || sp["name"] == "gistproxy.request")
      CHECK(sp["attributes"].value("gen_ai.conversation.id", "").size() == 32);
    if (sp["kind"] == "client") ++upstreams;
  }
  CHECK(traces.size() == 1);
  CHECK(compactions == 1);
  CHECK(page_ins == 1);
  CHECK(upstreams == 2);
  auto metrics = metrics_with(s.proxy.admin_port(), {"gistproxy_paging_churn_total{api=\"" + api + "\"} 1"});
  CHECK(metrics.find("gistproxy_page_ins_total{api=\"" + api + "\",mode=\"pattern\",result=\"ok\",source=\"proxy\"} 1") != std::string::npos);
  CHECK(metrics.find("gistproxy_paging_churn_total{api=\"" + api + "\"} 1") != std::string::npos);
}

TEST_CASE("two read_blob calls in one turn are both answered") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto res = s.ask(api, "two calls", haystack());
  REQUIRE(res.status == 200);
  CHECK(answer_text(api, nlohmann::json::parse(res.body)).find("NEEDLE") != std::string::npos);
  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].find("[lines 1-2 of ") != std::string::npos);
}

TEST_CASE("a turn mixing read_blob with the client's own call gives the client only its own call, once") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto res = s.ask(api, "with client call", haystack());
  REQUIRE(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(res.body.find("rb_") == std::string::npos);
  CHECK(res.body.find("run_1") != std::string::npos);
  CHECK(res.body.find("run_0") == std::string::npos);
}

TEST_CASE("at the hop limit the last hop forbids tool calls and the model answers") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s({"--max-page-in-hops", "2"});
  auto res = s.ask(api, "loop forever", haystack());
  REQUIRE(res.status == 200);
  CHECK(answer_text(api, nlohmann::json::parse(res.body)) == "gave up after 2 reads");
  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 3);
  CHECK_FALSE(forbids_tools(api, seen[0]));
  CHECK(forbids_tools(api, seen[2]));
}

TEST_CASE("the Responses API's echo of tools and tool_choice gives the client back its own, JSON and streamed") {
  const bool stream = GENERATE(false, true);
  CAPTURE(stream);
  stack s({"--max-page-in-hops", "2"});
  auto req = request_for("responses", "loop forever", haystack());  // every hop pages in; the last forbids tools
  req["tool_choice"] = "auto";
  if (stream) req["stream"] = true;
  const auto client_tools = req.contains("tools") ? req["tools"] : nlohmann::json::array();
  auto res = http_request(s.proxy.port(), "POST", "/v1/responses", req.dump(), key_header("responses"));
  REQUIRE(res.status == 200);
  REQUIRE(s.upstream.llm_bodies().size() == 3);
  std::vector<nlohmann::json> responses;
  if (!stream) responses.push_back(nlohmann::json::parse(res.body));
  for (const auto& data : stream ? sse_data(res.body) : std::vector<std::string>{}) {
    auto e = nlohmann::json::parse(data);
    if (e.contains("response")) responses.push_back(e["response"]);
  }
  REQUIRE(responses.size() >= (stream ? 3u : 1u));  // created, in_progress, completed
  for (const auto& r : responses) {
    CHECK(r["tools"] == client_tools);
    CHECK(r["tool_choice"] == "auto");  // not the last hop's "none"
  }
  CHECK(res.body.find("read_blob") == std::string::npos);
}

TEST_CASE("an unknown handle goes back to the model as a tool error it can act on") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto res = s.ask(api, "unknown handle", haystack());
  REQUIRE(res.status == 200);
  CHECK(answer_text(api, nlohmann::json::parse(res.body)).find("no stored output has handle") != std::string::npos);
  auto metrics = metrics_with(s.proxy.admin_port(), {"result=\"not_found\",source=\"proxy\"} 1"});
  CHECK(metrics.find("result=\"not_found\",source=\"proxy\"} 1") != std::string::npos);
}

TEST_CASE("a corrupted blob is never paged in: it is counted and stored again from the request's bytes which the model reads") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto output = haystack();
  REQUIRE(s.ask(api, "hello", output).status == 200);  // offloads and stores the output
  for (auto& e : std::filesystem::recursive_directory_iterator(s.proxy.store_dir())) {
    if (e.path().extension() != ".blob") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('\x01');
  }
  auto res = s.ask(api, "find the needle", output);
  REQUIRE(res.status == 200);
  // The request carries the output's exact bytes: the damaged blob is
  // replaced by them, never read (the offload service's GET, which has no
  // bytes at hand, is an integrity error: offload_service_test).
  CHECK(answer_text(api, nlohmann::json::parse(res.body)) == "found: 2501: config line 2500: NEEDLE secret_port=48213");
  auto seen = s.upstream.llm_bodies();
  CHECK(seen.back().find("failed its integrity check") == std::string::npos);
  auto metrics = metrics_with(s.proxy.admin_port(), {"gistproxy_integrity_failures_total{api=\"" + api + "\"} 1"});
  CHECK(metrics.find("gistproxy_integrity_failures_total{api=\"" + api + "\"} 1") != std::string::npos);
  bool span_says_so = false;
  auto failed_page_in = [](const auto& spans) {
    for (auto& sp : spans)
      if (sp["name"] == "page_in" && sp["attributes"]["gistproxy.integrity_ok"] == false) return true;
    return false;
  };
  for (auto& sp : read_spans_until(s.spans, failed_page_in))
    if (sp["name"] == "page_in" && sp["attributes"]["gistproxy.integrity_ok"] == false) span_says_so = true;
  CHECK(span_says_so);
}

TEST_CASE("an upstream error on a later hop reaches the client as that API's error") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto res = s.ask(api, "fail second hop", haystack());
  CHECK(res.status == 500);
  CHECK(res.body.find("mock failure") != std::string::npos);
  CHECK(res.body.find("read_blob") == std::string::npos);
}

TEST_CASE("streamed Anthropic messages: read_blob hops are spliced into one valid stream") {
  auto script = GENERATE(as<std::string>{}, "find the needle", "with client call");
  stack s;
  auto req = request_for("messages", script, haystack());
  req["stream"] = true;
  auto res = http_request(s.proxy.port(), "POST", "/v1/messages", req.dump(), {{"x-api-key", "sk-test"}});
  REQUIRE(res.status == 200);
  CHECK(res.headers["content-type"] == "text/event-stream");
  CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(res.body.find("rb_") == std::string::npos);

  // Walk the events as an SDK would.
  std::vector<nlohmann::json> events;
  for (const auto& data : sse_data(res.body)) events.push_back(nlohmann::json::parse(data));
  REQUIRE(events.size() >= 4);
  CHECK(events.front()["type"] == "message_start");
  CHECK(events.back()["type"] == "message_stop");
  int starts = 0, next_index = 0, pings = 0;
  std::string text;
  std::vector<std::string> tool_uses;
  for (auto& e : events) {
    auto type = e["type"].get<std::string>();
    if (type == "message_start") ++starts;
    if (type == "ping") ++pings;
    if (type == "content_block_start") {
      CHECK(e["index"] == next_index);  // consecutive across hops
      ++next_index;
      if (e["content_block"]["type"] == "tool_use") tool_uses.push_back(e["content_block"]["id"]);
    }
    if (type == "content_block_delta" && e["delta"]["type"] == "text_delta") text += e["delta"]["text"].get<std::string>();
  }
  CHECK(starts == 1);
  CHECK(pings >= 2);  // the upstream's and the proxy's keep-alive between hops
  auto& final_delta = events[events.size() - 2];
  CHECK(final_delta["type"] == "message_delta");
  CHECK(final_delta["usage"]["output_tokens"] == 20);  // two hops of 10
  if (script == "find the needle") {
    CHECK(text == "found: 2501: config line 2500: NEEDLE secret_port=48213");
    bool request_span_has_usage = false;
    for (auto& sp : read_spans_until(s.spans, [](const auto& all) { return count_named(all, "gistproxy.request") >= 1; }))
      if (sp["name"] == "gistproxy.request" && sp["attributes"].value("gen_ai.usage.output_tokens", 0) == 20)
        request_span_has_usage = true;
    CHECK(request_span_has_usage);
    CHECK(final_delta["delta"]["stop_reason"] == "end_turn");
    CHECK(s.upstream.llm_bodies().size() == 2);
  } else {
    CHECK(tool_uses == std::vector<std::string>{"run_1"});  // the client's call, once
    CHECK(final_delta["delta"]["stop_reason"] == "tool_use");
  }
}

TEST_CASE("streamed chat completions: hops spliced under one chunk id, usage summed once") {
  auto script = GENERATE(as<std::string>{}, "find the needle", "with client call");
  stack s;
  auto req = request_for("chat", script, haystack());
  req["stream"] = true;
  req["stream_options"] = {{"include_usage", true}};
  auto res = http_request(s.proxy.port(), "POST", "/v1/chat/completions", req.dump(), {{"Authorization", "sk-test"}});
  REQUIRE(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(res.body.ends_with("data: [DONE]\n\n"));
  std::vector<nlohmann::json> chunks;
  for (const auto& data : sse_data(res.body))
    if (data != "[DONE]") chunks.push_back(nlohmann::json::parse(data));
  std::string text;
  std::vector<std::string> calls;
  int finishes = 0, usage_chunks = 0;
  for (auto& c : chunks) {
    CHECK(c["id"] == chunks[0]["id"]);
    CHECK(c["created"] == chunks[0]["created"]);
    if (c["choices"].empty()) {
      ++usage_chunks;
      CHECK(c["usage"]["prompt_tokens"] == 200);
      continue;
    }
    auto& ch = c["choices"][0];
    if (!ch["finish_reason"].is_null()) ++finishes;
    if (ch["delta"].contains("content") && ch["delta"]["content"].is_string()) text += ch["delta"]["content"].get<std::string>();
    if (ch["delta"].contains("tool_calls"))
      for (auto& t : ch["delta"]["tool_calls"]) {
        CHECK(t["index"] == calls.size());
        calls.push_back(t["id"]);
      }
  }
  CHECK(finishes == 1);
  CHECK(usage_chunks == 1);
  if (script == "find the needle") CHECK(text == "found: 2501: config line 2500: NEEDLE secret_port=48213");
  else CHECK(calls == std::vector<std::string>{"run_1"});
}

TEST_CASE("streamed responses: one response.created, monotonic sequence numbers, one response.completed") {
  stack s;
  auto req = request_for("responses", "find the needle", haystack());
  req["stream"] = true;
  auto res = http_request(s.proxy.port(), "POST", "/v1/responses", req.dump(), {{"Authorization", "sk-test"}});
  REQUIRE(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);
  std::vector<nlohmann::json> events;
  for (const auto& data : sse_data(res.body)) events.push_back(nlohmann::json::parse(data));
  int created = 0, completed = 0, next_output = 0;
  std::string text;
  for (std::size_t i = 0; i < events.size(); ++i) {
    auto& e = events[i];
    CHECK(e["sequence_number"] == i);
    if (e["type"] == "response.created") ++created;
    if (e["type"] == "response.output_item.added") CHECK(e["output_index"] == next_output++);
    if (e["type"] == "response.output_text.delta") text += e["delta"].get<std::string>();
    if (e["type"] == "response.completed") {
      ++completed;
      CHECK(e["response"]["usage"]["input_tokens"] == 200);
      // The id of the last hop's response, the one holding the whole
      // conversation (response.created, sent before any later hop existed,
      // carries the first hop's): the upstream names its answers resp_1, resp_2.
      CHECK(e["response"]["id"] == "resp_" + std::to_string(s.upstream.llm_bodies().size()));
      CHECK(events[0]["response"]["id"] == "resp_1");
    }
  }
  CHECK(created == 1);
  CHECK(completed == 1);
  CHECK(events.back()["type"] == "response.completed");
  CHECK(text == "found: 2501: config line 2500: NEEDLE secret_port=48213");
}

TEST_CASE("an upstream error on a later hop of a stream becomes that API's SSE error event") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto req = request_for(api, "fail second hop", haystack());
  if (api != "gemini") req["stream"] = true;
  auto res = http_request(s.proxy.port(), "POST", path_for(api, true), req.dump(), key_header(api));
  REQUIRE(res.ok());  // the stream ends properly (last chunk), it does not hang
  CHECK(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);
  if (api == "chat" || api == "gemini") CHECK(res.body.find("data: {\"error\"") != std::string::npos);
  else CHECK(res.body.find("event: error") != std::string::npos);
  CHECK(res.body.find("HTTP 500") != std::string::npos);
}

TEST_CASE("a client that disconnects while a page-in hop runs cancels the remaining hops") {
  stack s;
  auto req = request_for("messages", "hang second hop", haystack());
  req["stream"] = true;
  auto body = req.dump();
  std::string raw = "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: sk-test\r\nContent-Type: application/json\r\n"
                    "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  auto got = raw_exchange(s.proxy.port(), raw, std::chrono::milliseconds(800));  // then the client hangs up
  CHECK(got.find("message_start") != std::string::npos);  // the stream had started
  CHECK(got.find("read_blob") == std::string::npos);
  for (int i = 0; i < 300 && s.upstream.hangs_cancelled() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(s.upstream.hangs_cancelled() == 1);  // the second hop's upstream request was closed
  CHECK(s.upstream.llm_bodies().size() == 2);
  auto metrics = metrics_with(s.proxy.admin_port(), {"type=\"client_disconnected\",group=\"treated\"} 1"});
  CHECK(metrics.find("gistproxy_errors_total{source=\"downstream\",type=\"client_disconnected\",group=\"treated\"} 1") != std::string::npos);
}


TEST_CASE("streamed per API: two calls and mixed calls and the hop limit and an unknown handle") {
  auto [api, script] = GENERATE(table<std::string, std::string>({
      {"chat", "two calls"}, {"responses", "two calls"}, {"messages", "two calls"},
      {"chat", "with client call"}, {"responses", "with client call"}, {"messages", "with client call"},
      {"chat", "loop forever"}, {"responses", "loop forever"}, {"messages", "loop forever"},
      {"chat", "unknown handle"}, {"responses", "unknown handle"}, {"messages", "unknown handle"},
      {"gemini", "two calls"}, {"gemini", "with client call"}, {"gemini", "loop forever"}, {"gemini", "unknown handle"},
  }));
  stack s({"--max-page-in-hops", "2"});
  auto req = request_for(api, script, haystack());
  if (api != "gemini") req["stream"] = true;
  auto res = http_request(s.proxy.port(), "POST", path_for(api, true), req.dump(), key_header(api));
  REQUIRE(res.ok());
  CHECK(res.status == 200);
  // (The unknown-handle model quotes the tool's error text, which names read_blob.)
  if (script != "unknown handle") CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(res.body.find("\"rb_") == std::string::npos);  // no read_blob call ids
  auto got = read_stream(api, res.body);
  if (script == "two calls") CHECK(got.text == "found: 2501: config line 2500: NEEDLE secret_port=48213");
  if (script == "with client call") CHECK(got.client_calls == std::vector<std::string>{"run_1"});
  if (script == "loop forever") {
    CHECK(got.text == "gave up after 2 reads");
    CHECK(forbids_tools(api, s.upstream.llm_bodies().back()));
  }
  if (script == "unknown handle") CHECK(got.text.find("no stored output has handle") != std::string::npos);
}

TEST_CASE("streamed: a corrupted blob is counted and stored again from the request's bytes before the model reads it") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto output = haystack();
  REQUIRE(s.ask(api, "hello", output).status == 200);
  for (auto& e : std::filesystem::recursive_directory_iterator(s.proxy.store_dir())) {
    if (e.path().extension() != ".blob") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('\x01');
  }
  auto req = request_for(api, "find the needle", output);
  if (api != "gemini") req["stream"] = true;
  auto res = http_request(s.proxy.port(), "POST", path_for(api, true), req.dump(), key_header(api));
  REQUIRE(res.ok());
  CHECK(read_stream(api, res.body).text == "found: 2501: config line 2500: NEEDLE secret_port=48213");
  CHECK(s.upstream.llm_bodies().back().find("failed its integrity check") == std::string::npos);
  auto metrics = metrics_with(s.proxy.admin_port(), {"gistproxy_integrity_failures_total{api=\"" + api + "\"} 1"});
  CHECK(metrics.find("gistproxy_integrity_failures_total{api=\"" + api + "\"} 1") != std::string::npos);
}

TEST_CASE("while a streamed page-in hop waits, keep-alive events keep flowing, counted and recorded like every byte") {
  const auto record = temp_path("keepalive-record.jsonl");
  stack s({"--stream-keepalive", "300ms", "--record", record.string()});
  auto req = request_for("messages", "slow second hop", haystack());
  req["stream"] = true;
  auto res = http_stream(s.proxy.port(), "POST", "/v1/messages", req.dump());
  REQUIRE(res.error.empty());
  std::string all;
  int pings_while_waiting = 0;
  for (auto& p : res.pieces) {
    all += p.bytes;
    if (p.bytes.find("event: ping") != std::string::npos && p.at_ms > 200 && p.at_ms < 1500) ++pings_while_waiting;
  }
  CHECK(pings_while_waiting >= 3);  // 1.5 s of silence upstream, a ping every 300 ms
  CHECK(all.find("found: ") != std::string::npos);
  CHECK(all.find("read_blob") == std::string::npos);
  // The keep-alives are part of what the client got: in the response bytes
  // counted and in the recording, byte for byte.
  const std::string bytes_series = R"(gistproxy_response_bytes_total{api="messages",group="treated"})";
  auto metrics = metrics_with(s.proxy.admin_port(), {bytes_series + " " + std::to_string(all.size())});
  CHECK(series_value(metrics, bytes_series) == double(all.size()));
  REQUIRE(s.proxy.stop() == 0);  // the record writer drains before exit
  std::ifstream in(record);
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(nlohmann::json::parse(line)["response_body"] == all);
}

TEST_CASE("a later hop's stream that ends before its turn does becomes an error event, not a clean end") {
  auto api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  stack s;
  auto req = request_for(api, "truncate second hop", haystack());
  if (api != "gemini") req["stream"] = true;
  auto res = http_request(s.proxy.port(), "POST", path_for(api, true), req.dump(), key_header(api));
  REQUIRE(res.ok());
  CHECK(res.body.find("ended before the end of the turn") != std::string::npos);
  CHECK(res.body.find("message_stop") == std::string::npos);
  CHECK(res.body.find("response.completed") == std::string::npos);
  CHECK(res.body.find("[DONE]") == std::string::npos);
}
