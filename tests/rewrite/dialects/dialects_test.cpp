#include "rewrite/dialect.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace gistproxy::rewrite;

TEST_CASE("dialects are chosen by path, ignoring the query string") {
  CHECK(dialect_for("POST", "/v1/chat/completions")->name() == "chat");
  CHECK(dialect_for("POST", "/openai/v1/chat/completions?x=1")->name() == "chat");
  CHECK(dialect_for("POST", "/v1/responses")->name() == "responses");
  CHECK(dialect_for("POST", "/v1/messages?beta=true")->name() == "messages");
  CHECK(dialect_for("GET", "/v1/models") == nullptr);
  CHECK(dialect_for("POST", "/v1/embeddings") == nullptr);
  CHECK(dialect_for("GET", "/v1/chat/completions") == nullptr);
}

TEST_CASE("chat requests give model, stream flag and a conversation key that ignores later turns") {
  auto* d = dialect_for("POST", "/v1/chat/completions");
  auto turn1 = d->inspect(R"({"model":"gpt-4o","stream":true,"messages":[
      {"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]})");
  auto turn2 = d->inspect(R"({"messages":[{"content":"Be brief.","role":"system"},
      {"role":"user","content":[{"type":"text","text":"Hi"}]},{"role":"assistant","content":"Hello"},
      {"role":"user","content":"More"}],"model":"gpt-4o"})");
  REQUIRE(turn1);
  REQUIRE(turn2);
  CHECK(turn1->model == "gpt-4o");
  CHECK(turn1->stream);
  CHECK_FALSE(turn2->stream);
  // Text parts are joined with a newline, so compare the string form separately.
  auto turn3 = d->inspect(R"({"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},
      {"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]})");
  CHECK(turn1->conversation_key == turn3->conversation_key);
  CHECK(turn1->conversation_key != d->inspect(R"({"model":"gpt-4o","messages":[{"role":"user","content":"Other"}]})")->conversation_key);
}

TEST_CASE("messages requests key on system and first user text, not on cache_control markers") {
  auto* d = dialect_for("POST", "/v1/messages");
  auto turn1 = d->inspect(R"({"model":"claude-sonnet-4-5","system":[{"type":"text","text":"You code."}],
      "messages":[{"role":"user","content":[{"type":"text","text":"Fix it","cache_control":{"type":"ephemeral"}}]}]})");
  auto turn2 = d->inspect(R"({"model":"claude-sonnet-4-5","system":[{"type":"text","text":"You code.","cache_control":{"type":"ephemeral"}}],
      "messages":[{"role":"user","content":[{"type":"text","text":"Fix it"}]},{"role":"assistant","content":"ok"},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}]})");
  REQUIRE(turn1);
  REQUIRE(turn2);
  CHECK(turn1->conversation_key == turn2->conversation_key);
  CHECK(turn1->model == "claude-sonnet-4-5");
}

TEST_CASE("responses requests read instructions and a string or list input") {
  auto* d = dialect_for("POST", "/v1/responses");
  auto a = d->inspect(R"({"model":"gpt-5","instructions":"Be kind.","input":"Hello"})");
  auto b = d->inspect(R"({"model":"gpt-5","instructions":"Be kind.","input":[{"role":"user","content":"Hello"},
      {"type":"function_call_output","call_id":"c1","output":"x"}],"stream":true})");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->conversation_key == b->conversation_key);
  CHECK(b->stream);
}

TEST_CASE("bodies a dialect cannot parse are reported, not guessed") {
  auto* d = dialect_for("POST", "/v1/chat/completions");
  CHECK_FALSE(d->inspect("not json"));
  CHECK_FALSE(d->inspect(R"({"model":"x","messages":[)"));
  CHECK_FALSE(d->inspect(R"([1,2,3])"));
  CHECK_FALSE(d->inspect(R"({"model":"x"} trailing)"));
}

TEST_CASE("usage is read from each dialect's JSON responses") {
  auto chat = dialect_for("POST", "/v1/chat/completions")->usage_from_response(
      nlohmann::json::parse(R"({"usage":{"prompt_tokens":10,"completion_tokens":3}})"));
  CHECK(chat.input_tokens == 10);
  CHECK(chat.output_tokens == 3);
  auto resp = dialect_for("POST", "/v1/responses")->usage_from_response(
      nlohmann::json::parse(R"({"usage":{"input_tokens":7,"output_tokens":2}})"));
  CHECK(resp.input_tokens == 7);
  // Anthropic input tokens include cache reads and writes (GenAI conventions).
  auto msg = dialect_for("POST", "/v1/messages")->usage_from_response(nlohmann::json::parse(
      R"({"usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":9}})"));
  CHECK(msg.input_tokens == 125);
  CHECK(msg.output_tokens == 9);
}
