// Requests whose answer gistproxy could not follow are marked so: the proxy
// then forwards them untouched instead of offering read_blob.
#include <catch2/catch.hpp>

#include "rewrite/dialect.hpp"

using namespace gistproxy::rewrite;

namespace {

request_facts facts_of(std::string_view target, std::string_view body) {
  const dialect* d = dialect_for("POST", target);
  REQUIRE(d);
  auto facts = d->inspect(body);
  REQUIRE(facts);
  d->inspect_target(target, *facts);
  return *facts;
}

}  // namespace

TEST_CASE("a Gemini stream is interceptable only as SSE (alt=sse), never as a streamed JSON array") {
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";
  CHECK(facts_of("/v1beta/models/g:streamGenerateContent?alt=sse", body).answer_interceptable);
  CHECK(facts_of("/v1beta/models/g:streamGenerateContent?key=k&alt=sse", body).answer_interceptable);
  CHECK_FALSE(facts_of("/v1beta/models/g:streamGenerateContent", body).answer_interceptable);
  CHECK_FALSE(facts_of("/v1beta/models/g:streamGenerateContent?alt=json", body).answer_interceptable);
  CHECK_FALSE(facts_of("/v1beta/models/g:streamGenerateContent?xalt=sse", body).answer_interceptable);
  CHECK(facts_of("/v1beta/models/g:generateContent", body).answer_interceptable);
}

TEST_CASE("a Responses request with background:true is not interceptable (its answer is polled later)") {
  CHECK_FALSE(facts_of("/v1/responses", R"({"model":"m","background":true,"input":"hi"})").answer_interceptable);
  CHECK(facts_of("/v1/responses", R"({"model":"m","background":false,"input":"hi"})").answer_interceptable);
  CHECK(facts_of("/v1/responses", R"({"model":"m","input":"hi"})").answer_interceptable);
}
