// Streamed responses assembled into the object the API returns unstreamed.
#include <catch2/catch.hpp>

#include "rewrite/sse/assemble.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;

namespace {
std::string data(const J& j) { return "data: " + j.dump() + "\n\n"; }
std::string event(const std::string& name, const J& j) { return "event: " + name + "\ndata: " + j.dump() + "\n\n"; }
}  // namespace

TEST_CASE("chat chunks merge into one chat.completion: content, tool call arguments by index, usage") {
  auto chunk = [](J delta, J finish = nullptr) {
    return J{{"id", "c-1"}, {"object", "chat.completion.chunk"}, {"created", 7}, {"model", "gpt-4o"},
             {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
  };
  std::string s = ": keepalive\n\n" + data(chunk({{"role", "assistant"}, {"content", "Hel"}})) + data(chunk({{"content", "lo"}})) +
                  data(chunk({{"tool_calls", {{{"index", 0}, {"id", "call_1"}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", "{\"a\""}}}}}}})) +
                  data(chunk({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", ":1}"}}}}}}})) +
                  data(chunk(J::object(), "tool_calls")) +
                  data({{"id", "c-1"}, {"object", "chat.completion.chunk"}, {"choices", J::array()}, {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 2}}}}) +
                  "data: [DONE]\n\n";
  auto r = dialect_named("chat")->assemble_stream(s);
  REQUIRE(r);
  CHECK((*r)["object"] == "chat.completion");
  CHECK((*r)["model"] == "gpt-4o");
  auto& m = (*r)["choices"][0]["message"];
  CHECK(m["content"] == "Hello");
  CHECK(m["tool_calls"][0]["id"] == "call_1");
  CHECK(m["tool_calls"][0]["function"]["arguments"] == "{\"a\":1}");
  CHECK((*r)["choices"][0]["finish_reason"] == "tool_calls");
  CHECK((*r)["usage"]["prompt_tokens"] == 5);
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
  auto r = dialect_named("messages")->assemble_stream(s);
  REQUIRE(r);
  CHECK((*r)["id"] == "msg_1");
  CHECK((*r)["content"][0]["text"] == "Hi there");
  CHECK((*r)["content"][1]["input"]["cmd"] == "ls");
  CHECK((*r)["stop_reason"] == "tool_use");
  CHECK((*r)["usage"]["output_tokens"] == 42);
  CHECK((*r)["usage"]["input_tokens"] == 10);
}

TEST_CASE("Responses streams assemble into the response of their terminal event, errors stay errors") {
  std::string s = event("response.created", {{"type", "response.created"}, {"response", {{"id", "r1"}, {"status", "in_progress"}}}}) +
                  event("response.output_text.delta", {{"type", "response.output_text.delta"}, {"delta", "x"}}) +
                  event("response.completed", {{"type", "response.completed"}, {"response", {{"id", "r1"}, {"status", "completed"}, {"output", J::array()}}}});
  auto r = dialect_named("responses")->assemble_stream(s);
  REQUIRE(r);
  CHECK((*r)["status"] == "completed");
  auto err = dialect_named("messages")->assemble_stream(event("error", {{"type", "error"}, {"error", {{"type", "overloaded_error"}}}}));
  REQUIRE(err);
  CHECK((*err)["error"]["type"] == "overloaded_error");
  CHECK_FALSE(dialect_named("chat")->assemble_stream("data: [DONE]\n\n"));
  CHECK(looks_like_sse("event: x\ndata: 1\n\n"));
  CHECK_FALSE(looks_like_sse("{\"id\":1}"));
}
