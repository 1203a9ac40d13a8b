#include <catch2/catch.hpp>

#include "rewrite/upstream_route.hpp"

using namespace gistproxy::rewrite;

namespace {

request_credentials with(std::initializer_list<credential_kind> kinds, bool anthropic_version = false) {
  request_credentials c;
  for (auto k : kinds) c.has[std::size_t(k)] = true;
  c.anthropic_version = anthropic_version;
  return c;
}

struct path_row {
  const char* method;
  const char* target;
  const char* family;
  const char* dialect;  // "" when forwarded untouched
  bool count_tokens;
};

}  // namespace

TEST_CASE("routing: every path goes to its own family, read by its own family's dialect or by none") {
  const auto row = GENERATE(values<path_row>({
      {"POST", "/v1/chat/completions", "openai", "chat", false},
      {"POST", "/v1/embeddings", "openai", "", false},
      {"POST", "/v1/threads/thread_1/messages", "openai", "", false},  // Assistants, not Anthropic's Messages
      {"GET", "/v1/models", "openai", "", false},
      {"POST", "/v1/messages?beta=true", "anthropic", "messages", false},
      {"POST", "/v1/messages/count_tokens?beta=true", "anthropic", "messages", true},
      {"POST", "/v1/messages/batches", "anthropic", "", false},
      {"POST", "/v1beta/models/gemini-2.5-flash:generateContent", "gemini", "gemini", false},
      {"POST", "/v1beta/models/gemini-2.5-flash:countTokens", "gemini", "gemini", true},
      {"POST", "/v1/models/gemini-2.5-flash:countTokens", "gemini", "gemini", true},
      {"POST", "/v1beta/openai/chat/completions", "gemini", "", false},
      {"POST", "/v1/projects/p/locations/l/publishers/google/models/g:countTokens", "vertex", "vertex-gemini", true},
      {"GET", "/v1/projects/p/locations/l/publishers/google/models/g", "vertex", "", false},
      {"POST", "/v1/projects/p/locations/l/publishers/anthropic/models/count-tokens:rawPredict", "vertex",
       "vertex-messages", true},
      {"POST", "/model/m/invoke", "bedrock", "bedrock-messages", false},
      {"GET", "/model/m/invoke", "bedrock", "", false},
      {"POST", "/model/m/count-tokens", "bedrock", "bedrock-converse", true},
      {"POST", "/guardrail/g/version/1/apply", "bedrock", "", false},
      {"POST", "/async-invoke", "bedrock", "", false},
      {"POST", "/openai/deployments/d/embeddings?api-version=1", "azure", "", false},
      {"POST", "/openai/deployments/team/d/chat/completions?api-version=1", "azure", "", false},
      {"POST", "/openai/deployments/d/chat/completions?api-version=1", "azure", "azure-chat", false},
  }));
  CAPTURE(row.method, row.target);
  const auto r = route_request(row.method, row.target, with({}));
  CHECK(r.family == row.family);
  CHECK((r.api ? r.api->name() : std::string_view()) == row.dialect);
  CHECK(r.count_tokens == row.count_tokens);
  CHECK_FALSE(r.has_foreign());
}

TEST_CASE("routing: where the path names no provider, the credential does, and a foreign one is flagged") {
  SECTION("paths both OpenAI and Anthropic serve follow the key or anthropic-version") {
    CHECK(route_request("GET", "/v1/models", with({credential_kind::anthropic_key})).family == "anthropic");
    CHECK(route_request("GET", "/v1/models", with({}, true)).family == "anthropic");
    CHECK(route_request("GET", "/v1/models/gemini-2.5-flash", with({credential_kind::google_key})).family == "gemini");
    CHECK(route_request("GET", "/v1/models", with({credential_kind::azure_key})).family == "azure");
  }
  SECTION("a key on another provider's path is foreign there") {
    const auto r = route_request("POST", "/v1/chat/completions", with({credential_kind::google_key}));
    CHECK(r.family == "openai");
    CHECK(r.foreign[std::size_t(credential_kind::google_key)]);
    const auto v = route_request("POST", "/v1/projects/p/locations/l/publishers/google/models/g:countTokens",
                                 with({credential_kind::google_key}));
    CHECK_FALSE(v.has_foreign());  // Vertex express mode takes Google's API keys
    CHECK(route_request("POST", "/v1/messages", with({credential_kind::aws_signature})).has_foreign());
  }
}

TEST_CASE("routing: a gateway's mount names its provider whatever the method, read by that provider's dialect") {
  const auto row = GENERATE(values<path_row>({
      {"POST", "/anthropic/v1/messages", "anthropic", "messages", false},
      {"GET", "/anthropic/v1/messages", "anthropic", "", false},
      {"OPTIONS", "/anthropic/v1/messages", "anthropic", "", false},
      {"GET", "/anthropic/v1/models", "anthropic", "", false},
      {"POST", "/anthropic/v1/messages/count_tokens", "anthropic", "messages", true},
      {"POST", "/anthropic/v1/chat/completions", "anthropic", "", false},  // Anthropic's OpenAI-compatible API: not OpenAI's
      {"GET", "/gemini/v1beta/models", "gemini", "", false},
      {"POST", "/gemini/v1beta/models/g:generateContent?alt=sse", "gemini", "gemini", false},
      {"DELETE", "/gemini/v1beta/cachedContents/c1", "gemini", "", false},
      {"POST", "/vertex_ai/v1/projects/p/locations/l/publishers/google/models/g:generateContent", "vertex", "vertex-gemini",
       false},
      {"POST", "/vertex_ai/v1/projects/p/locations/l/publishers/google/models/g:countTokens", "vertex", "vertex-gemini",
       true},
      {"POST", "/vertex_ai/v1/projects/p/locations/l/publishers/anthropic/models/c:rawPredict", "vertex",
       "vertex-messages", false},
      {"GET", "/vertex_ai/v1/projects/p/locations/l/operations", "vertex", "", false},
      {"POST", "/bedrock/model/m/converse", "bedrock", "bedrock-converse", false},
      {"POST", "/azure/openai/deployments/d/chat/completions?api-version=1", "azure", "azure-chat", false},
      {"GET", "/anthropic", "anthropic", "", false},
  }));
  CAPTURE(row.method, row.target);
  const auto r = route_request(row.method, row.target, with({}));
  CHECK(r.family == row.family);
  CHECK((r.api ? r.api->name() : std::string_view()) == row.dialect);
  CHECK(r.count_tokens == row.count_tokens);
  // The mount decides, not a credential: a Bearer token rides along, a foreign key is flagged.
  CHECK(route_request(row.method, row.target, with({credential_kind::anthropic_key})).family == row.family);
}

TEST_CASE("routing: a path that merely starts like a gateway's mount is no mount") {
  CHECK(route_request("GET", "/anthropics/v1/models", with({})).family == "openai");
  CHECK(gateway_mount_of("/geminis/v1beta/models").family.empty());
  CHECK(gateway_mount_of("/vertex_ai?x=1").family == "vertex");
  CHECK(gateway_mount_of("/anthropic/v1/messages?beta=true").target == "/v1/messages?beta=true");
}
