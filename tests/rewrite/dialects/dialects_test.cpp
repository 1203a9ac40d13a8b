#include "rewrite/dialect.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace gistproxy::rewrite;

TEST_CASE("dialects are chosen by path, ignoring the query string") {
  CHECK(dialect_for("POST", "/v1/chat/completions")->name() == "chat");
  CHECK(dialect_for("POST", "/proxy/v1/chat/completions?x=1")->name() == "chat");
  // Azure OpenAI's paths are Azure's, on purpose (deployment and v1 paths).
  CHECK(dialect_for("POST", "/openai/v1/chat/completions?x=1")->name() == "azure-chat");
  CHECK(dialect_for("POST", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21")->name() == "azure-chat");
  CHECK(dialect_for("POST", "/v1/responses")->name() == "responses");
  CHECK(dialect_for("POST", "/v1/messages?beta=true")->name() == "messages");
  CHECK(dialect_for("GET", "/v1/models") == nullptr);
  CHECK(dialect_for("POST", "/v1/embeddings") == nullptr);
  CHECK(dialect_for("GET", "/v1/chat/completions") == nullptr);
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
