// The registry with OpenAI-compatible providers beside the built-in APIs
// (--compatible NAME=PREFIX=URL): each prefix is its own family's, read by
// its own chat and Responses endpoints, and nothing else routes differently.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "rewrite/endpoint_registry.hpp"
#include "rewrite/upstream_route.hpp"

using namespace gistproxy::rewrite;

namespace {

compatible_provider provider(std::string spec) {
  std::string error;
  auto p = parse_compatible(spec, error);
  INFO(error);
  REQUIRE(p);
  return *p;
}

const endpoint_registry& two_providers() {
  static const std::vector<compatible_provider> providers = {
      provider("groq=/groq/v1=https://api.groq.com/openai/v1"), provider("mistral=/mistral/v1=https://api.mistral.ai/v1")};
  static const endpoint_registry r{providers};
  return r;
}

request_credentials with(std::initializer_list<credential_kind> kinds) {
  request_credentials c;
  for (auto k : kinds) c.has[std::size_t(k)] = true;
  return c;
}

std::string_view api_of(const upstream_route& r) { return r.api ? r.api->name() : std::string_view(); }

struct row {
  const char* method;
  const char* target;
  const char* family;
  const char* api;  // "" when forwarded untouched
  const char* local_prefix;
};

}  // namespace

TEST_CASE("compatible providers: each prefix routes to its own family, read by its own chat and Responses endpoints") {
  const auto r = GENERATE(values<row>({
      {"POST", "/groq/v1/chat/completions", "groq", "groq-chat", "/groq/v1"},
      {"POST", "/groq/v1/chat/completions/?x=1", "groq", "groq-chat", "/groq/v1"},
      {"POST", "/groq/v1/responses", "groq", "groq-responses", "/groq/v1"},
      {"GET", "/groq/v1/models", "groq", "", "/groq/v1"},
      {"POST", "/groq/v1/embeddings", "groq", "", "/groq/v1"},
      {"POST", "/groq/v1/messages", "groq", "", "/groq/v1"},  // ends like Anthropic's: still the provider's
      {"GET", "/groq/v1", "groq", "", "/groq/v1"},
      {"POST", "/mistral/v1/chat/completions", "mistral", "mistral-chat", "/mistral/v1"},
      {"POST", "/mistral/v1/responses", "mistral", "mistral-responses", "/mistral/v1"},
      // Paths that merely start alike are not the provider's.
      {"POST", "/groqx/v1/chat/completions", "openai", "chat", ""},
      {"POST", "/groq/v2/chat/completions", "openai", "chat", ""},
  }));
  CAPTURE(r.method, r.target);
  const auto route = route_request(two_providers(), r.method, r.target, {});
  CHECK(route.family == r.family);
  CHECK(api_of(route) == r.api);
  CHECK(route.local_prefix == r.local_prefix);
  CHECK_FALSE(route.count_tokens);
  CHECK_FALSE(route.has_foreign());
  if (route.api) CHECK(route.api->provider_name() == r.family);
}

TEST_CASE("compatible providers: every built-in path routes as it does without them") {
  const auto target = GENERATE(as<std::string>{}, "/v1/chat/completions", "/v1/responses", "/v1/messages?beta=true",
                               "/v1/messages/count_tokens", "/v1/models", "/v1/threads/t/messages", "/v1/embeddings",
                               "/v1beta/models/g:generateContent", "/v1beta/models/g:countTokens",
                               "/openai/v1/chat/completions", "/openai/deployments/d/responses", "/model/m/converse",
                               "/model/m/count-tokens", "/anthropic/v1/messages", "/proxy/v1/chat/completions",
                               "/v1/projects/p/locations/l/publishers/google/models/g:countTokens");
  const auto method = GENERATE(as<std::string>{}, "POST", "GET");
  const auto credentials = GENERATE(request_credentials{}, with({credential_kind::anthropic_key}));
  CAPTURE(target, method);
  const auto alone = route_request(endpoint_registry::builtin(), method, target, credentials);
  const auto beside = route_request(two_providers(), method, target, credentials);
  CHECK(beside.family == alone.family);
  CHECK(beside.api == alone.api);
  CHECK(beside.count_tokens == alone.count_tokens);
  CHECK(beside.foreign == alone.foreign);
  CHECK(beside.local_prefix.empty());
}

TEST_CASE("compatible providers: a credential that names another provider is foreign under the prefix") {
  for (auto kind : {credential_kind::anthropic_key, credential_kind::google_key, credential_kind::azure_key,
                    credential_kind::aws_signature}) {
    const auto route = route_request(two_providers(), "POST", "/groq/v1/chat/completions", with({kind}));
    CAPTURE(int(kind));
    CHECK(route.family == "groq");  // the path decides; the credential does not move the request elsewhere
    CHECK(route.foreign[std::size_t(kind)]);
  }
  // The provider's own Bearer token (no credential kind) belongs there.
  CHECK_FALSE(route_request(two_providers(), "POST", "/groq/v1/chat/completions", {}).has_foreign());
}

TEST_CASE("compatible providers: one at /openai/v1 wins there over Azure's v1 API, and Azure keeps its other paths") {
  const std::vector<compatible_provider> providers = {provider("gateway=/openai/v1=http://gateway.internal/v1")};
  const endpoint_registry r{providers};
  CHECK(api_of(route_request(endpoint_registry::builtin(), "POST", "/openai/v1/chat/completions", {})) == "azure-chat");
  auto route = route_request(r, "POST", "/openai/v1/chat/completions", {});
  CHECK(route.family == "gateway");
  CHECK(api_of(route) == "gateway-chat");
  CHECK(route_request(r, "GET", "/openai/v1/models", {}).family == "gateway");
  route = route_request(r, "POST", "/openai/deployments/d/chat/completions?api-version=1", {});
  CHECK(route.family == "azure");
  CHECK(api_of(route) == "azure-chat");
  CHECK(route_request(r, "POST", "/openai/responses", {}).family == "azure");
}

TEST_CASE("compatible providers: the endpoints speak the built-in wire formats under the provider's names") {
  const auto& r = two_providers();
  const auto* chat = r.endpoint_named("groq-chat");
  const auto* responses = r.endpoint_named("groq-responses");
  REQUIRE(chat);
  REQUIRE(responses);
  CHECK(&chat->wire() == &endpoint_named("chat")->wire());
  CHECK(&responses->wire() == &endpoint_named("responses")->wire());
  CHECK(chat->request_path("any-model") == "/groq/v1/chat/completions");
  CHECK(r.endpoint_for("POST", chat->request_path("m")) == chat);
  CHECK(r.endpoint_for("POST", responses->request_path("m")) == responses);
  CHECK(chat->upstream().default_url == "https://api.groq.com/openai/v1");
  CHECK(chat->upstream().sigv4_service.empty());
  CHECK(&chat->upstream() == &responses->upstream());
  CHECK(chat->credentials().headers == std::vector<std::string_view>{"authorization"});
  // Listed after the built-in families, the default one still first.
  REQUIRE(r.families().size() == endpoint_registry::builtin().families().size() + 2);
  CHECK(r.families().front()->name == "openai");
  CHECK(r.families().back()->name == "mistral");
  CHECK(r.family_named("groq") == &chat->upstream());
  CHECK(endpoint_registry::builtin().endpoint_named("groq-chat") == nullptr);
}

TEST_CASE("compatible providers: names and prefixes are each given once, and a taken one is refused when built") {
  const std::vector<compatible_provider> before = {provider("groq=/groq/v1=https://api.groq.com/openai/v1")};
  CHECK(compatible_problem(provider("groq=/other=http://x"), before));
  CHECK(compatible_problem(provider("other=/groq/v1=http://x"), before));
  CHECK_FALSE(compatible_problem(provider("other=/groq/v1/x=http://x"), before));
  CHECK_FALSE(compatible_problem(provider("ollama=/ollama=http://localhost:11434/v1"), before));
  const std::vector<compatible_provider> twice = {before[0], before[0]};
  CHECK_THROWS_AS(endpoint_registry{twice}, std::invalid_argument);
}

TEST_CASE("routing: no two built-in families claim a path on its own, so the first claim that holds is the only one") {
  // Whether some path lies under both claims (their further tests aside).
  auto overlap = [](const path_claim& a, const path_claim& b) {
    auto as_path = [](std::string_view p) { return p.ends_with('/') ? p.substr(0, p.size() - 1) : p; };
    return claims(path_claim{b.prefix}, as_path(a.prefix)) || claims(path_claim{a.prefix}, as_path(b.prefix));
  };
  const auto families = endpoint_registry::builtin().families();
  for (const auto* a : families)
    for (const auto* b : families) {
      if (a == b) continue;
      for (const auto& ca : a->paths)
        for (const auto& cb : b->paths) {
          if (ca.strength != claim_strength::path || cb.strength != claim_strength::path) continue;
          CAPTURE(a->name, ca.prefix, b->name, cb.prefix);
          CHECK_FALSE(overlap(ca, cb));
        }
    }
}
