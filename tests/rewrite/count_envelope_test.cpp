#include "rewrite/count_envelope.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rewrite/offload/base64.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("count envelope: a wrapped request is taken out byte for byte and put back around what replaces it") {
  const std::string inner = R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})";
  const std::string converse = " {\"input\" : {\"converse\":" + inner + "} } ";
  auto u = unwrap_count("bedrock", "", converse);
  REQUIRE(u);
  CHECK(u->request == inner);
  CHECK(u->endpoint_name == "bedrock-converse");
  CHECK(rewrap_count(u->envelope, u->request) == converse);
  CHECK(rewrap_count(u->envelope, "{}") == " {\"input\" : {\"converse\":{}} } ");

  const std::string gemini = R"({"generateContentRequest":{"model":"models/g","contents":[]}})";
  u = unwrap_count("gemini", "g", gemini);
  REQUIRE(u);
  CHECK(u->request == R"({"model":"models/g","contents":[]})");
  CHECK(rewrap_count(u->envelope, u->request) == gemini);
}

TEST_CASE("count envelope: Gemini's contents-only count becomes a generateContentRequest naming the path's model") {
  auto u = unwrap_count("gemini", "gemini-2.5-flash", R"({"contents":[{"parts":[{"text":"hi"}]}]})");
  REQUIRE(u);
  CHECK(u->request == R"({"model":"models/gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}]})");
  CHECK(rewrap_count(u->envelope, u->request) ==
        R"({"generateContentRequest":{"model":"models/gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}]}})");
  CHECK_FALSE(unwrap_count("gemini", "", R"({"contents":[]})"));  // no model to name
}

TEST_CASE("count envelope: Bedrock's invokeModel body is base64 in and base64 out") {
  const std::string inner = R"({"anthropic_version":"bedrock-2023-05-31","messages":[]})";
  auto u = unwrap_count("bedrock", "", R"({"input":{"invokeModel":{"body":")" + base64_encode(inner) + "\"}}}");
  REQUIRE(u);
  CHECK(u->request == inner);
  CHECK(u->endpoint_name == "bedrock-messages");
  CHECK(rewrap_count(u->envelope, "{}") == R"({"input":{"invokeModel":{"body":")" + base64_encode("{}") + "\"}}}");
}

TEST_CASE("count envelope: any other shape is not taken apart") {
  for (const std::string& body : std::vector<std::string>{R"({"contents":[],"generateContentRequest":{}})", R"({"generateContentRequest":[]})",
                                 R"({"contents":[]} trailing)", "[1]", "", R"({"contents":[)"})
    CHECK_FALSE(unwrap_count("gemini", "g", body));
  for (const std::string& body : std::vector<std::string>{R"({"input":{"converse":{},"invokeModel":{}}})", R"({"input":{"converse":[]}})",
                                 R"({"input":{"invokeModel":{"body":"%%%"}}})",
                                 R"({"input":{"invokeModel":{"body":")" + base64_encode("[1]") + "\"}}}",
                                 R"({"input":{"converse":{}},"x":1})"})
    CHECK_FALSE(unwrap_count("bedrock", "", body));
  CHECK_FALSE(unwrap_count("anthropic", "", R"({"messages":[]})"));
}
