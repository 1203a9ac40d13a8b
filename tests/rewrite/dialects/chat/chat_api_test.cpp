// OpenAI Chat Completions's adapter on its own: requests read, the next hop's body,
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

// One `data:` event.
std::string data(const J& j) { return "data: " + j.dump() + "\n\n"; }

}  // namespace

TEST_CASE("chat requests give model, stream flag and a conversation key that ignores later turns") {
  auto* d = endpoint_for("POST", "/v1/chat/completions");
  auto turn1 = d->wire().inspect(R"({"model":"gpt-4o","stream":true,"messages":[
      {"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]})");
  auto turn2 = d->wire().inspect(R"({"messages":[{"content":"Be brief.","role":"system"},
      {"role":"user","content":[{"type":"text","text":"Hi"}]},{"role":"assistant","content":"Hello"},
      {"role":"user","content":"More"}],"model":"gpt-4o"})");
  REQUIRE(turn1);
  REQUIRE(turn2);
  CHECK(turn1->model == "gpt-4o");
  CHECK(turn1->stream);
  CHECK_FALSE(turn2->stream);
  // Text parts are joined with a newline, so compare the string form separately.
  auto turn3 = d->wire().inspect(R"({"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},
      {"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]})");
  CHECK(turn1->conversation_key == turn3->conversation_key);
  CHECK(turn1->conversation_key != d->wire().inspect(R"({"model":"gpt-4o","messages":[{"role":"user","content":"Other"}]})")->conversation_key);
}

TEST_CASE("chat: the next hop appends the read_blob turn and its results, the last hop sets tool_choice none") {
  auto* d = endpoint_for("POST", "/v1/chat/completions");
  std::string body = R"({"model":"m","messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"run"}}]})";
  njson response = {{"choices", {{{"message", {{"role", "assistant"}, {"content", nullptr},
                                              {"tool_calls", {{{"id", "a"}, {"type", "function"}, {"function", {{"name", "read_blob"}, {"arguments", "{\"handle\":\"x\"}"}}}},
                                                              {{"id", "b"}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}}}}}}};
  auto calls = d->wire().find_blob_calls(response, "read_blob");
  REQUIRE(calls.blob_calls.size() == 1);
  CHECK(calls.client_calls == 1);
  auto next = d->wire().continue_conversation(body, response, "read_blob", {{"a", "bytes", false}}, false);
  REQUIRE(next);
  auto j = njson::parse(*next);
  REQUIRE(j["messages"].size() == 3);
  CHECK(j["messages"][1]["tool_calls"].size() == 1);  // the client's call is dropped: the model re-issues it
  CHECK(j["messages"][2] == njson({{"role", "tool"}, {"tool_call_id", "a"}, {"content", "bytes"}}));
  CHECK(next->find(R"("tools":[{"type":"function","function":{"name":"run"}}])") != std::string::npos);  // byte-identical
  CHECK_FALSE(j.contains("tool_choice"));
  auto last = d->wire().continue_conversation(body, response, "read_blob", {{"a", "bytes", false}}, true);
  CHECK(njson::parse(*last)["tool_choice"] == "none");
}

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
  auto r = endpoint_named("chat")->wire().assemble_stream(s);
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
