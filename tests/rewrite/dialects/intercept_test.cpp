#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/dialect.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/stream_filter.hpp"

using namespace gistproxy::rewrite;
using njson = nlohmann::json;

TEST_CASE("chat: the next hop appends the read_blob turn and its results, the last hop sets tool_choice none") {
  auto* d = dialect_for("POST", "/v1/chat/completions");
  std::string body = R"({"model":"m","messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"run"}}]})";
  njson response = {{"choices", {{{"message", {{"role", "assistant"}, {"content", nullptr},
                                              {"tool_calls", {{{"id", "a"}, {"type", "function"}, {"function", {{"name", "read_blob"}, {"arguments", "{\"handle\":\"x\"}"}}}},
                                                              {{"id", "b"}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}}}}}}};
  auto calls = d->find_blob_calls(response, "read_blob");
  REQUIRE(calls.blob_calls.size() == 1);
  CHECK(calls.client_calls == 1);
  auto next = d->continue_conversation(body, response, "read_blob", {{"a", "bytes", false}}, false);
  REQUIRE(next);
  auto j = njson::parse(*next);
  REQUIRE(j["messages"].size() == 3);
  CHECK(j["messages"][1]["tool_calls"].size() == 1);  // the client's call is dropped: the model re-issues it
  CHECK(j["messages"][2] == njson({{"role", "tool"}, {"tool_call_id", "a"}, {"content", "bytes"}}));
  CHECK(next->find(R"("tools":[{"type":"function","function":{"name":"run"}}])") != std::string::npos);  // byte-identical
  CHECK_FALSE(j.contains("tool_choice"));
  auto last = d->continue_conversation(body, response, "read_blob", {{"a", "bytes", false}}, true);
  CHECK(njson::parse(*last)["tool_choice"] == "none");
}

TEST_CASE("responses: with previous_response_id the next hop keeps the client's id and appends to its input") {
  auto* d = dialect_for("POST", "/v1/responses");
  const njson call = {{"type", "function_call"}, {"call_id", "c"}, {"name", "read_blob"}, {"arguments", "{}"}};
  const njson client_call = {{"type", "function_call"}, {"call_id", "k"}, {"name", "run"}, {"arguments", "{}"}};
  const njson output = {{"type", "function_call_output"}, {"call_id", "c"}, {"output", "out"}};
  njson response = {{"id", "resp_1"}, {"output", {call, client_call}}};
  SECTION("store:false: never chained on the hop's unstored response; a client call beside read_blob is dropped") {
    std::string body = R"({"model":"m","store":false,"previous_response_id":"resp_0","input":[{"role":"user","content":"q"}]})";
    auto next = d->continue_conversation(body, response, "read_blob", {{"c", "out", false}}, true);
    REQUIRE(next);
    auto j = njson::parse(*next);
    CHECK(j["previous_response_id"] == "resp_0");  // was: resp_1, never stored (400)
    CHECK(j["input"] == njson::array({{{"role", "user"}, {"content", "q"}}, call, output}));  // was: no output for "k" (400)
    CHECK(j["tool_choice"] == "none");
  }
  SECTION("a string input becomes its user message, then the items") {
    std::string body = R"({"model":"m","previous_response_id":"resp_0","input":"q"})";
    auto next = d->continue_conversation(body, response, "read_blob", {{"c", "out", false}}, false);
    REQUIRE(next);
    CHECK(njson::parse(*next)["input"] == njson::array({{{"role", "user"}, {"content", "q"}}, call, output}));
  }
}

TEST_CASE("messages: the next hop appends an assistant turn and a user turn of tool results") {
  auto* d = dialect_for("POST", "/v1/messages");
  std::string body = R"({"model":"m","messages":[{"role":"user","content":"q"}]})";
  njson response = {{"content", {{{"type", "text"}, {"text", "looking"}},
                                {{"type", "tool_use"}, {"id", "t"}, {"name", "read_blob"}, {"input", {{"handle", "h"}}}}}}};
  auto next = d->continue_conversation(body, response, "read_blob", {{"t", "gone", true}}, true);
  auto j = njson::parse(*next);
  CHECK(j["messages"][1]["content"].size() == 2);
  CHECK(j["messages"][2]["content"][0]["is_error"] == true);
  CHECK(j["tool_choice"] == njson({{"type", "none"}}));
}

TEST_CASE("usage numbers add up, nested details included") {
  njson a = {{"prompt_tokens", 10}, {"details", {{"cached", 2}}}};
  add_numbers(a, {{"prompt_tokens", 5}, {"details", {{"cached", 1}}}, {"extra", 3}});
  CHECK(a == njson({{"prompt_tokens", 15}, {"details", {{"cached", 3}}}, {"extra", 3}}));
}

TEST_CASE("the Anthropic stream filter withholds read_blob blocks and renumbers the rest") {
  auto f = dialect_named("messages")->make_stream_filter("read_blob");
  sse::event_parser parser;
  std::string out;
  auto feed = [&](const std::string& s) { parser.feed(s, [&](const sse::event& e) { out += f->on_event(e); }); };
  feed("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n");
  feed("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"read_blob\",\"input\":{}}}\n\n");
  feed("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"handle\\\":\\\"h\\\"}\"}}\n\n");
  feed("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
  feed("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":7}}\n\n");
  feed("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  auto hop = f->end_hop();
  REQUIRE(hop.calls.size() == 1);
  CHECK(hop.calls[0].arguments == "{\"handle\":\"h\"}");
  CHECK(out.find("read_blob") == std::string::npos);
  CHECK(out.find("message_start") != std::string::npos);
  out.clear();
  // Second hop: its message_start is dropped, its text block becomes index 0.
  feed("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n");
  feed("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
  feed("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n");
  CHECK(out.find("message_start") == std::string::npos);
  CHECK(out.find("\"index\":0") != std::string::npos);
  CHECK(f->end_hop().calls.empty());
  auto end = f->finish();
  CHECK(end.find("\"output_tokens\":10") != std::string::npos);  // 7 + 3
  CHECK(end.find("end_turn") != std::string::npos);
  CHECK(end.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
}

TEST_CASE("a hop counts as complete only when its own end-of-turn event arrived") {
  for (std::string_view api : {"chat", "responses"}) {
    auto f = dialect_named(api)->make_stream_filter("read_blob");
    sse::event_parser parser;
    auto feed = [&](const std::string& s) { parser.feed(s, [&](const sse::event& e) { f->on_event(e); }); };
    if (api == "chat") {
      feed("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n");
      CHECK(f->end_hop().complete);
      feed("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut\"},\"finish_reason\":null}]}\n\n");
    } else {
      feed("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"output\":[]}}\n\n");
      CHECK(f->end_hop().complete);
      feed("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"cut\"}\n\n");
    }
    CHECK_FALSE(f->end_hop().complete);  // the earlier hop's end does not count for this one
  }
}

TEST_CASE("a spliced Responses stream completes with the last hop's id, whose state holds the whole conversation") {
  auto f = dialect_named("responses")->make_stream_filter("read_blob");
  sse::event_parser parser;
  std::string out;
  auto feed = [&](const std::string& type, const njson& data) {
    parser.feed("event: " + type + "\ndata: " + data.dump() + "\n\n", [&](const sse::event& e) { out += f->on_event(e); });
  };
  const njson call = {{"type", "function_call"}, {"call_id", "c"}, {"name", "read_blob"}, {"arguments", "{}"}};
  feed("response.created", {{"type", "response.created"}, {"response", {{"id", "resp_hop1"}, {"output", njson::array()}}}});
  feed("response.output_item.added", {{"type", "response.output_item.added"}, {"output_index", 0}, {"item", call}});
  feed("response.output_item.done", {{"type", "response.output_item.done"}, {"output_index", 0}, {"item", call}});
  feed("response.completed", {{"type", "response.completed"}, {"response", {{"id", "resp_hop1"}, {"output", {call}}}}});
  REQUIRE(f->end_hop().calls.size() == 1);
  feed("response.created", {{"type", "response.created"}, {"response", {{"id", "resp_hop2"}, {"output", njson::array()}}}});
  feed("response.completed", {{"type", "response.completed"}, {"response", {{"id", "resp_hop2"}, {"output", njson::array()}}}});
  REQUIRE(f->end_hop().calls.empty());
  const auto end = f->finish();
  const auto data = njson::parse(end.substr(end.find("data: ") + 6));
  CHECK(data["response"]["id"] == "resp_hop2");  // was: resp_hop1, whose stored state ends in the read_blob call
}
