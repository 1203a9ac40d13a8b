// An OpenAI-compatible provider's family and endpoints
// (rewrite/dialects/compatible/compatible_endpoint.cpp): one family per
// provider that owns its PREFIX, and an endpoint per operation under it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/dialects/chat/chat_api.hpp"
#include "rewrite/dialects/compatible/compatible_endpoint.hpp"
#include "rewrite/dialects/responses/responses_api.hpp"
#include "rewrite/upstream_route.hpp"

using namespace gistproxy::rewrite;

namespace {

const chat_wire chat;
const responses_wire responses;

// Built from strings that are gone once it is built: the family keeps its own.
const compatible_family& groq() {
  static const compatible_family f{std::string("gr") + "oq", std::string("/groq") + "/v1",
                                   std::string("https://api.groq.com") + "/openai/v1"};
  return f;
}

}  // namespace

TEST_CASE("a compatible family owns every path under its prefix and forwards it to its URL") {
  const auto& f = groq().family();
  CHECK(f.name == "groq");
  CHECK(f.default_url == "https://api.groq.com/openai/v1");
  CHECK(f.local_prefix == "/groq/v1");
  CHECK(groq().prefix() == "/groq/v1");
  CHECK(f.sigv4_service.empty());
  CHECK(f.credentials.empty());  // its Bearer tokens name no credential kind of their own
  REQUIRE(f.paths.size() == 1);
  CHECK(claims(f.paths[0], "/groq/v1/models"));
  CHECK(claims(f.paths[0], "/groq/v1/chat/completions"));
  CHECK(claims(f.paths[0], "/groq/v1"));
  CHECK_FALSE(claims(f.paths[0], "/groq/v1x/models"));
  CHECK_FALSE(claims(f.paths[0], "/groq/v2/models"));
}

TEST_CASE("a compatible endpoint serves exactly its prefix and operation and is labelled by both") {
  const compatible_endpoint c{chat, groq(), "chat/completions"};
  const compatible_endpoint r{responses, groq(), "responses"};
  CHECK(c.name() == "groq-chat");
  CHECK(r.name() == "groq-responses");
  CHECK(c.serves_path("/groq/v1/chat/completions"));
  CHECK(r.serves_path("/groq/v1/responses"));
  for (std::string_view path : {"/groq/v1/responses", "/groq/v1/chat/completions/x", "/groq/v1/chat", "/v1/chat/completions",
                                "/groq/v2/chat/completions"}) {
    CAPTURE(path);
    CHECK_FALSE(c.serves_path(path));
  }
  // The model travels in the body: every request goes to the one path.
  CHECK(c.request_path("llama-3.3-70b") == "/groq/v1/chat/completions");
  CHECK(r.request_path("") == "/groq/v1/responses");
}

TEST_CASE("a compatible endpoint goes to its own family as its provider named by a Bearer token") {
  const compatible_endpoint c{chat, groq(), "chat/completions"};
  CHECK(&c.upstream() == &groq().family());
  CHECK(c.provider_name() == "groq");
  CHECK(&c.wire() == &chat);
  CHECK(c.credentials().headers == std::vector<std::string_view>{"authorization"});
  CHECK(c.credentials().query_parameter.empty());
  CHECK(c.request_affinity(nlohmann::json::parse(R"({"model":"m","messages":[]})")) == 0);
}
