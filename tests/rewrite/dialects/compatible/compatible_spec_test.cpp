// --compatible NAME=PREFIX=URL (rewrite/dialects/compatible/compatible_spec.cpp):
// a spec is read into its parts, and one that is malformed or would take a
// built-in API's paths is refused, saying why.
#include <catch2/catch.hpp>

#include "rewrite/dialects/compatible/compatible_endpoint.hpp"

using namespace gistproxy::rewrite;

namespace {

// Why `spec` is refused (empty when it is not).
std::string refusal(std::string_view spec) {
  std::string error;
  const auto p = parse_compatible(spec, error);
  return p ? std::string() : error;
}

}  // namespace

TEST_CASE("a NAME=PREFIX=URL spec is read into its three parts and the URL may hold '='") {
  std::string error;
  auto p = parse_compatible("groq=/groq/v1=https://api.groq.com/openai/v1", error);
  REQUIRE(p);
  CHECK(p->name == "groq");
  CHECK(p->prefix == "/groq/v1");
  CHECK(p->url == "https://api.groq.com/openai/v1");
  p = parse_compatible("local_vllm-2=/Local.v~1=http://127.0.0.1:8000/v1?tenant=a=b", error);
  REQUIRE(p);
  CHECK(p->name == "local_vllm-2");
  CHECK(p->prefix == "/Local.v~1");
  CHECK(p->url == "http://127.0.0.1:8000/v1?tenant=a=b");
}

TEST_CASE("compatible providers: a name or prefix that another API holds is refused, saying why") {
  const auto spec = GENERATE(as<std::string>{}, "groq=/groq/v1", "groq", "=/groq/v1=u", "Groq=/groq/v1=u", "gr oq=/g=u",
                             "groq=groq/v1=u", "groq=/groq/v1/=u", "groq=/groq//v1=u", "groq=/groq/../v1=u",
                             "groq=/groq/v%31=u", "groq=/groq/v1=", "openai=/x=u", "azure=/x=u", "x=/v1=u", "x=/v1/chat=u",
                             "x=/v1/complete=u", "x=/openai=u", "x=/model=u", "x=/anthropic/v1=u", "x=/vertex_ai=u", "x=/=u",
                             std::string(33, 'a') + "=/x=u", "x=/" + std::string(128, 'a') + "=u");
  CAPTURE(spec);
  std::string error;
  CHECK_FALSE(parse_compatible(spec, error));
  CHECK_FALSE(error.empty());
}

TEST_CASE("a refused spec names the part that is wrong") {
  struct row {
    std::string spec;
    std::string says;
  };
  const auto r = GENERATE(values<row>({
      {"groq=/groq/v1", "expected NAME=PREFIX=URL"},
      {"=/groq=u", "NAME must be 1 to 32 characters"},
      {std::string(33, 'a') + "=/groq=u", "NAME must be 1 to 32 characters"},
      {"Groq=/groq=u", "NAME may hold only lowercase letters"},
      {"groq=groq=u", "PREFIX must start with '/'"},
      {"groq=/" + std::string(128, 'a') + "=u", "PREFIX must start with '/' and be 2 to 128 characters"},
      {"groq=/groq/=u", "no trailing '/'"},
      {"groq=/groq/./v1=u", "no trailing '/'"},
      {"groq=/groq/v%31=u", "PREFIX may hold only letters"},
      {"groq=/groq=", "URL is empty"},
      {"gemini=/g=u", "NAME 'gemini' is a built-in provider's"},
      {"x=/azure/openai=u", "lies under the gateway mount /azure of the azure APIs"},
      {"x=/openai=u", "would take the azure APIs' paths (/openai/)"},
      {"x=/v1beta1=u", "would take the vertex APIs' paths (/v1beta1/)"},
  }));
  CAPTURE(r.spec);
  CHECK_THAT(refusal(r.spec), Catch::Contains(r.says));
}

TEST_CASE("a prefix inside a built-in folder is allowed but one above it is not") {
  CHECK(refusal("gateway=/openai/v1=http://gateway.internal/v1").empty());
  CHECK(refusal("x=/v1beta1/x=http://h").empty());
  CHECK(refusal("x=/v1x=http://h").empty());  // merely starts like /v1/: no built-in path is under it
  CHECK_FALSE(refusal("x=/v1=http://h").empty());
  CHECK_FALSE(refusal("x=/openai=http://h").empty());
}

TEST_CASE("a provider given after others is refused for a name or prefix they hold") {
  std::string error;
  const std::vector<compatible_provider> before = {*parse_compatible("groq=/groq/v1=http://g", error),
                                                   *parse_compatible("mistral=/mistral/v1=http://m", error)};
  CHECK_THAT(compatible_problem({"groq", "/other", "http://x"}, before).value_or(""), Catch::Contains("NAME 'groq' is given twice"));
  CHECK_THAT(compatible_problem({"other", "/mistral/v1", "http://x"}, before).value_or(""),
             Catch::Contains("PREFIX /mistral/v1 is given twice (mistral, other)"));
  CHECK_FALSE(compatible_problem({"other", "/mistral", "http://x"}, before));
  CHECK_FALSE(compatible_problem({"groq", "/groq/v1", "http://g"}, {}));
}
