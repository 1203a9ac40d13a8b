#include "rewrite/page_in/hop_text.hpp"

#include <catch2/catch.hpp>

using gistproxy::rewrite::answer_shows_text;
using nlohmann::json;

TEST_CASE("hop text: an answer of read_blob calls alone shows nothing in any API's shape") {
  const auto chat = json::parse(R"({"choices":[{"message":{"role":"assistant","content":null,
    "tool_calls":[{"id":"c1","type":"function","function":{"name":"read_blob","arguments":"{\"handle\":\"ab\"}"}}]}}]})");
  const auto messages = json::parse(R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read_blob",
    "input":{"handle":"ab"}}],"stop_reason":"tool_use"})");
  const auto responses = json::parse(R"({"output":[{"type":"function_call","call_id":"c1","name":"read_blob",
    "arguments":"{\"handle\":\"ab\"}"}]})");
  const auto gemini = json::parse(R"({"candidates":[{"content":{"role":"model","parts":[{"functionCall":
    {"name":"read_blob","args":{"handle":"ab"}}}]}}]})");
  const auto converse = json::parse(R"({"output":{"message":{"role":"assistant","content":[{"toolUse":
    {"toolUseId":"t1","name":"read_blob","input":{"handle":"ab"}}}]}},"stopReason":"tool_use"})");
  for (const auto* r : {&chat, &messages, &responses, &gemini, &converse}) CHECK_FALSE(answer_shows_text(*r));
  CHECK_FALSE(answer_shows_text(json::parse(R"({"choices":[{"message":{"content":""}}]})")));
}

TEST_CASE("hop text: text thinking or a refusal before the call is shown") {
  CHECK(answer_shows_text(json::parse(R"({"choices":[{"message":{"content":"Let me look."}}]})")));
  CHECK(answer_shows_text(json::parse(R"({"choices":[{"message":{"content":null,"refusal":"no"}}]})")));
  CHECK(answer_shows_text(json::parse(R"({"content":[{"type":"thinking","thinking":"hmm","signature":"x"},
    {"type":"tool_use","name":"read_blob","input":{}}]})")));
  CHECK(answer_shows_text(json::parse(R"({"output":[{"type":"message","content":[{"type":"output_text","text":"ok"}]}]})")));
  CHECK(answer_shows_text(json::parse(R"({"candidates":[{"content":{"parts":[{"text":"a","thought":true}]}}]})")));
  CHECK(answer_shows_text(json::parse(R"({"output":{"message":{"content":[{"reasoningContent":
    {"reasoningText":{"text":"r"}}}]}}})")));
}

TEST_CASE("hop text: an answer too deep or too large to look through counts as shown") {
  json deep = json::object();
  json* at = &deep;
  for (int i = 0; i < 200; ++i) at = &((*at)["a"] = json::object());
  CHECK(answer_shows_text(deep));
  json wide = json::array();
  for (int i = 0; i < 120'000; ++i) wide.push_back(json::object());
  CHECK(answer_shows_text(wide));
  CHECK_FALSE(answer_shows_text(json::array({json::object(), json::object()})));
}
