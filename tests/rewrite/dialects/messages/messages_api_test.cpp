// Anthropic Messages' adapter on its own: requests read, the next hop's body,
// its stream filter and its stream assembly. What every API must do is in
// ../conformance_test.cpp.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/sse/assemble.hpp"
#include "rewrite/sse/event_parser.hpp"
#include "rewrite/stream_filter.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;
using njson = nlohmann::json;

namespace {

// One named event.
std::string event(const std::string& name, const J& j) { return "event: " + name + "\ndata: " + j.dump() + "\n\n"; }

}  // namespace

TEST_CASE("messages requests key on system and first user text, not on cache_control markers") {
  auto* d = endpoint_for("POST", "/v1/messages");
  auto turn1 = d->wire().inspect(R"({"model":"claude-sonnet-4-5","system":[{"type":"text","text":"You code."}],
      "messages":[{"role":"user","content":[{"type":"text","text":"Fix it","cache_control":{"type":"ephemeral"}}]}]})");
  auto turn2 = d->wire().inspect(R"({"model":"claude-sonnet-4-5","system":[{"type":"text","text":"You code.","cache_control":{"type":"ephemeral"}}],
      "messages":[{"role":"user","content":[{"type":"text","text":"Fix it"}]},{"role":"assistant","content":"ok"},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}]})");
  REQUIRE(turn1);
  REQUIRE(turn2);
  CHECK(turn1->conversation_key == turn2->conversation_key);
  CHECK(turn1->model == "claude-sonnet-4-5");
}

TEST_CASE("messages requests key on the system prompt without Claude Code's billing block") {
  auto* d = endpoint_for("POST", "/v1/messages");
  const auto key = [&](const std::string& cch, const std::string& prompt) {
    return d->wire()
        .inspect(R"({"model":"claude-opus-4-7","system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.152.d94; cch=)" +
                 cch + R"(;"},{"type":"text","text":")" + prompt + R"("}],"messages":[{"role":"user","content":"Fix it"}]})")
        ->conversation_key;
  };
  CHECK(key("c2426", "You code.") == key("2b3b7", "You code."));  // one conversation, each request's checksum
  CHECK(key("c2426", "You code.") != key("c2426", "You test."));
  CHECK(key("c2426", "You code.").find("billing") == std::string::npos);
  // Billing lines between, before and after other blocks: only they go, in one pass.
  std::string many = R"({"model":"m","system":[)";
  for (int i = 0; i < 2000; ++i)
    many += R"({"type":"text","text":"x-anthropic-billing-header: cch=)" + std::to_string(i) + R"(;"},)" +
            (i == 1000 ? R"({"type":"text","text":"You code."},)" : "");
  many += R"({"type":"text","text":"x-anthropic-billing-header: cch=end;"}],"messages":[{"role":"user","content":"Fix it"}]})";
  const auto plain = d->wire().inspect(R"({"model":"m","system":[{"type":"text","text":"You code."}],"messages":[{"role":"user","content":"Fix it"}]})");
  REQUIRE(plain);
  REQUIRE(d->wire().inspect(many));
  CHECK(d->wire().inspect(many)->conversation_key == plain->conversation_key);
}

TEST_CASE("messages: the next hop appends an assistant turn and a user turn of tool results") {
  auto* d = endpoint_for("POST", "/v1/messages");
  std::string body = R"({"model":"m","messages":[{"role":"user","content":"q"}]})";
  njson response = {{"content", {{{"type", "text"}, {"text", "looking"}},
                                {{"type", "tool_use"}, {"id", "t"}, {"name", "read_blob"}, {"input", {{"handle", "h"}}}}}}};
  auto next = d->wire().continue_conversation(body, response, "read_blob", {{"t", "gone", true}}, true);
  auto j = njson::parse(*next);
  CHECK(j["messages"][1]["content"].size() == 2);
  CHECK(j["messages"][2]["content"][0]["is_error"] == true);
  CHECK(j["tool_choice"] == njson({{"type", "none"}}));
}

TEST_CASE("the Anthropic stream filter withholds read_blob blocks and renumbers the rest") {
  auto f = endpoint_named("messages")->wire().make_stream_filter("read_blob");
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

TEST_CASE("Anthropic events assemble into one message with text, parsed tool input and final usage") {
  std::string s =
      event("message_start", {{"type", "message_start"}, {"message", {{"id", "msg_1"}, {"type", "message"}, {"role", "assistant"}, {"content", J::array()}, {"model", "claude"}, {"usage", {{"input_tokens", 10}, {"output_tokens", 1}}}}}}) +
      event("ping", {{"type", "ping"}}) +
      event("content_block_start", {{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}}) +
      event("content_block_delta", {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", "Hi "}}}}) +
      event("content_block_delta", {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", "there"}}}}) +
      event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}) +
      event("content_block_start", {{"type", "content_block_start"}, {"index", 1}, {"content_block", {{"type", "tool_use"}, {"id", "tu_1"}, {"name", "run"}, {"input", J::object()}}}}) +
      event("content_block_delta", {{"type", "content_block_delta"}, {"index", 1}, {"delta", {{"type", "input_json_delta"}, {"partial_json", "{\"cmd\":"}}}}) +
      event("content_block_delta", {{"type", "content_block_delta"}, {"index", 1}, {"delta", {{"type", "input_json_delta"}, {"partial_json", "\"ls\"}"}}}}) +
      event("content_block_stop", {{"type", "content_block_stop"}, {"index", 1}}) +
      event("message_delta", {{"type", "message_delta"}, {"delta", {{"stop_reason", "tool_use"}, {"stop_sequence", nullptr}}}, {"usage", {{"output_tokens", 42}}}}) +
      event("message_stop", {{"type", "message_stop"}});
  auto r = endpoint_named("messages")->wire().assemble_stream(s);
  REQUIRE(r);
  CHECK((*r)["id"] == "msg_1");
  CHECK((*r)["content"][0]["text"] == "Hi there");
  CHECK((*r)["content"][1]["input"]["cmd"] == "ls");
  CHECK((*r)["stop_reason"] == "tool_use");
  CHECK((*r)["usage"]["output_tokens"] == 42);
  CHECK((*r)["usage"]["input_tokens"] == 10);
}
