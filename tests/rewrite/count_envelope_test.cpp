#include "rewrite/count_envelope.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rewrite/endpoint.hpp"
#include "rewrite/offload/base64.hpp"

using namespace gistproxy::rewrite;

namespace {

// A count's body as the endpoint that counts at its path unwraps it.
std::optional<unwrapped_count> unwrap_at(std::string_view endpoint_name, std::string_view model, std::string_view body) {
  return endpoint_named(endpoint_name)->unwrap_count(model, body);
}

}  // namespace

TEST_CASE("count envelope: a wrapped request is taken out byte for byte and put back around what replaces it") {
  const std::string inner = R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})";
  const std::string converse = " {\"input\" : {\"converse\":" + inner + "} } ";
  auto u = unwrap_at("bedrock-converse", "", converse);
  REQUIRE(u);
  CHECK(u->request == inner);
  CHECK(u->reader->name() == "bedrock-converse");
  CHECK(rewrap_count(u->envelope, u->request) == converse);
  CHECK(rewrap_count(u->envelope, "{}") == " {\"input\" : {\"converse\":{}} } ");

  const std::string gemini = R"({"generateContentRequest":{"model":"models/g","contents":[]}})";
  u = unwrap_at("gemini", "g", gemini);
  REQUIRE(u);
  CHECK(u->request == R"({"model":"models/g","contents":[]})");
  CHECK(rewrap_count(u->envelope, u->request) == gemini);
}

TEST_CASE("count envelope: Gemini's contents-only count becomes a generateContentRequest naming the path's model") {
  auto u = unwrap_at("gemini", "gemini-2.5-flash", R"({"contents":[{"parts":[{"text":"hi"}]}]})");
  REQUIRE(u);
  CHECK(u->request == R"({"model":"models/gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}]})");
  CHECK(rewrap_count(u->envelope, u->request) ==
        R"({"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}]}})");
  CHECK_FALSE(unwrap_at("gemini", "", R"({"contents":[]})"));  // no model to name
}

TEST_CASE("count envelope: Bedrock's invokeModel body is base64 in and base64 out") {
  const std::string inner = R"({"anthropic_version":"bedrock-2023-05-31","messages":[]})";
  auto u = unwrap_at("bedrock-converse", "", R"({"input":{"invokeModel":{"body":")" + base64_encode(inner) + "\"}}}");
  REQUIRE(u);
  CHECK(u->request == inner);
  CHECK(u->reader->name() == "bedrock-messages");
  CHECK(rewrap_count(u->envelope, "{}") == R"({"input":{"invokeModel":{"body":")" + base64_encode("{}") + "\"}}}");
}

TEST_CASE("count envelope: any other shape is not taken apart") {
  for (const std::string& body : std::vector<std::string>{R"({"contents":[],"generateContentRequest":{}})", R"({"generateContentRequest":[]})",
                                 R"({"contents":[]} trailing)", "[1]", "", R"({"contents":[)"})
    CHECK_FALSE(unwrap_at("gemini", "g", body));
  for (const std::string& body : std::vector<std::string>{R"({"input":{"converse":{},"invokeModel":{}}})", R"({"input":{"converse":[]}})",
                                 R"({"input":{"invokeModel":{"body":"%%%"}}})",
                                 R"({"input":{"invokeModel":{"body":")" + base64_encode("[1]") + "\"}}}",
                                 R"({"input":{"converse":{}},"x":1})"})
    CHECK_FALSE(unwrap_at("bedrock-converse", "", body));
  CHECK_FALSE(unwrap_at("messages", "", R"({"messages":[]})"));
}
