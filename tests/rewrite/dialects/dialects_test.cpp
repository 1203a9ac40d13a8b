#include "rewrite/endpoint.hpp"
#include "tests/rewrite/dialects/facts_of.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace gistproxy::rewrite;

TEST_CASE("dialects are chosen by path, ignoring the query string") {
  CHECK(endpoint_for("POST", "/v1/chat/completions")->name() == "chat");
  CHECK(endpoint_for("POST", "/proxy/v1/chat/completions?x=1")->name() == "chat");
  // Azure OpenAI's paths are Azure's, on purpose (deployment and v1 paths).
  CHECK(endpoint_for("POST", "/openai/v1/chat/completions?x=1")->name() == "azure-chat");
  CHECK(endpoint_for("POST", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21")->name() == "azure-chat");
  CHECK(endpoint_for("POST", "/v1/responses")->name() == "responses");
  CHECK(endpoint_for("POST", "/v1/messages?beta=true")->name() == "messages");
  CHECK(endpoint_for("GET", "/v1/models") == nullptr);
  CHECK(endpoint_for("POST", "/v1/embeddings") == nullptr);
  CHECK(endpoint_for("GET", "/v1/chat/completions") == nullptr);
}

TEST_CASE("bodies a dialect cannot parse are reported, not guessed") {
  auto* d = endpoint_for("POST", "/v1/chat/completions");
  CHECK_FALSE(d->wire().inspect("not json"));
  CHECK_FALSE(d->wire().inspect(R"({"model":"x","messages":[)"));
  CHECK_FALSE(d->wire().inspect(R"([1,2,3])"));
  CHECK_FALSE(d->wire().inspect(R"({"model":"x"} trailing)"));
}

TEST_CASE("usage is read from each dialect's JSON responses") {
  auto chat = endpoint_for("POST", "/v1/chat/completions")->wire().usage_from_response(
      nlohmann::json::parse(R"({"usage":{"prompt_tokens":10,"completion_tokens":3}})"));
  CHECK(chat.input_tokens == 10);
  CHECK(chat.output_tokens == 3);
  auto resp = endpoint_for("POST", "/v1/responses")->wire().usage_from_response(
      nlohmann::json::parse(R"({"usage":{"input_tokens":7,"output_tokens":2}})"));
  CHECK(resp.input_tokens == 7);
  // Anthropic input tokens include cache reads and writes (GenAI conventions).
  auto msg = endpoint_for("POST", "/v1/messages")->wire().usage_from_response(nlohmann::json::parse(
      R"({"usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":9}})"));
  CHECK(msg.input_tokens == 125);
  CHECK(msg.output_tokens == 9);
}

TEST_CASE("a response's usage is read in the walk that finds it: the last usage member counts") {
  const auto& chat = endpoint_for("POST", "/v1/chat/completions")->wire();
  auto from_text = [&](std::string_view body) { return chat.usage_from_response(body); };
  CHECK(from_text(R"({"usage":{"prompt_tokens":5},"choices":[{"a":[1,{"b":"}"}]}]})").input_tokens == 5);
  CHECK(from_text(R"({"usage":{"prompt_tokens":5},"usage":{"prompt_tokens":7,"completion_tokens":2}})").input_tokens == 7);
  // A later usage that is no object leaves none, as a tree's last member would.
  CHECK_FALSE(from_text(R"({"usage":{"prompt_tokens":5},"usage":3})").known());
  CHECK(from_text(R"({"usage":3,"usage":{"prompt_tokens":4}})").input_tokens == 4);
  // Nothing is counted from a response that does not parse to its end.
  CHECK_FALSE(from_text(R"({"usage":{"prompt_tokens":5},"choices":[})").known());
  CHECK_FALSE(from_text(R"({"usage":{"prompt_tokens":5,}})").known());
}

TEST_CASE("cloud endpoints are recognised by their exact paths, and name the model from the path") {
  auto name_of = [](std::string_view target) {
    const auto* d = endpoint_for("POST", target);
    return d ? std::string(d->name()) : std::string("none");
  };
  CHECK(name_of("/openai/deployments/prod-gpt/responses?api-version=2025-04-01-preview") == "azure-responses");
  CHECK(name_of("/openai/responses?api-version=2025-04-01-preview") == "azure-responses");
  CHECK(name_of("/openai/deployments/prod-gpt/chat/completions/extra") == "none");
  CHECK(name_of("/v1beta1/projects/p/locations/global/publishers/anthropic/models/claude-x:streamRawPredict") == "vertex-messages");
  CHECK(name_of("/v1/projects/p/locations/l/publishers/meta/models/llama:rawPredict") == "none");
  CHECK(name_of("/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent") == "vertex-gemini");
  CHECK(name_of("/v1beta/models/gemini-2.5-flash:generateContent") == "gemini");
  CHECK(name_of("/model/anthropic.claude-x-v1%3A0/invoke") == "bedrock-messages");
  CHECK(name_of("/model/anthropic.claude-x-v1%3A0/converse-stream") == "bedrock-converse");
  CHECK(name_of("/model//invoke") == "none");

  const auto* bedrock = endpoint_for("POST", "/model/x/invoke");
  REQUIRE(bedrock);
  const std::string body = R"({"anthropic_version":"bedrock-2023-05-31","max_tokens":10,"messages":[{"role":"user","content":"hi"}]})";
  auto facts = bedrock->wire().inspect(body);
  REQUIRE(facts);
  bedrock->inspect_target("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.anthropic.claude-x-v1%3A0/"
                          "invoke-with-response-stream",
                          *facts);
  CHECK(facts->model == "arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-x-v1:0");
  CHECK(facts->stream);
  bedrock->inspect_target("/model/bad%0Aid/invoke", *facts);
  CHECK(facts->model.empty());  // a control byte is no model name (it would reach spans and logs)
  // InvokeModel serves every vendor: a body without anthropic_version is not Claude's.
  CHECK_FALSE(bedrock->wire().inspect(R"({"inputText":"hi","textGenerationConfig":{}})"));

  const auto* azure = endpoint_for("POST", "/openai/deployments/prod-gpt/chat/completions");
  REQUIRE(azure);
  auto az = azure->wire().inspect(R"({"messages":[{"role":"user","content":"hi"}]})");
  REQUIRE(az);
  azure->inspect_target("/openai/deployments/prod-gpt/chat/completions?api-version=2024-10-21", *az);
  CHECK(az->model == "prod-gpt");  // the deployment, when the body names no model
  auto named = azure->wire().inspect(R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})");
  azure->inspect_target("/openai/deployments/prod-gpt/chat/completions", *named);
  CHECK(named->model == "gpt-4o");
  CHECK(&azure->wire() == &endpoint_named("chat")->wire());
}

// Vertex AI's Gemini endpoint speaks Gemini's wire format: its stream is one
// a filter can follow only as SSE, as on Google AI, and its path names the model.
TEST_CASE("a Vertex Gemini stream is interceptable only as SSE and names its model in the path") {
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
  const std::string path = "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent";
  const auto sse = gistproxy::testing::facts_of(path + "?alt=sse", body);
  CHECK(sse.answer_interceptable);
  CHECK(sse.stream);
  CHECK(sse.model == "gemini-2.5-flash");
  CHECK_FALSE(gistproxy::testing::facts_of(path, body).answer_interceptable);
}
