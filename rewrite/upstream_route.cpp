#include "rewrite/upstream_route.hpp"
#include "rewrite/request_target.hpp"

#include <algorithm>

namespace gistproxy::rewrite {
namespace {

// The families' names, as their endpoints' upstream() says them.
constexpr std::string_view openai = "openai", anthropic = "anthropic", gemini = "gemini", vertex = "vertex",
                           azure = "azure", bedrock = "bedrock";

constexpr std::string_view anthropic_families[] = {anthropic};
constexpr std::string_view google_families[] = {gemini, vertex};
constexpr std::string_view azure_families[] = {azure};
constexpr std::string_view aws_families[] = {bedrock};

// LiteLLM's names for its pass-through mounts (its provider ids).
struct mount {
  std::string_view prefix, family;
};
constexpr mount gateway_mounts[] = {
    {"/anthropic", anthropic}, {"/gemini", gemini}, {"/vertex_ai", vertex}, {"/bedrock", bedrock}, {"/azure", azure}};

// `path` is `prefix` (a folder, ending in '/') or lies under it.
bool under(std::string_view path, std::string_view prefix) {
  return path.starts_with(prefix) || path == prefix.substr(0, prefix.size() - 1);
}

// Gemini's model methods under /v1/ (/v1beta/ is Gemini's whatever the method).
// OpenAI's fine-tuned model ids hold colons too, but never end in one of these.
bool gemini_method_path(std::string_view path) {
  if (!path.starts_with("/v1/models/") && !path.starts_with("/v1/tunedModels/")) return false;
  const auto colon = path.rfind(':');
  if (colon == std::string_view::npos || path.find('/', colon) != std::string_view::npos) return false;
  const auto method = path.substr(colon + 1);
  for (std::string_view m : {"generateContent", "streamGenerateContent", "countTokens", "embedContent",
                             "batchEmbedContents", "batchGenerateContent"})
    if (method == m) return true;
  return false;
}

// Paths only OpenAI serves (some end like another API's: the Assistants'
// /v1/threads/{id}/messages is not Anthropic's /v1/messages).
bool openai_path(std::string_view path) {
  for (std::string_view p : {"/v1/chat/", "/v1/responses/", "/v1/completions/", "/v1/embeddings/", "/v1/threads/",
                             "/v1/assistants/", "/v1/audio/", "/v1/images/", "/v1/moderations/", "/v1/batches/",
                             "/v1/fine_tuning/", "/v1/vector_stores/", "/v1/uploads/", "/v1/realtime/",
                             "/v1/conversations/", "/v1/organization/"})
    if (under(path, p)) return true;
  return false;
}

// The family a path names; empty when it names none (or only a credential can tell).
std::string_view path_family(std::string_view path, const request_credentials& c) {
  if (under(path, "/openai/")) return azure;
  if (under(path, "/model/") || under(path, "/guardrail/") || under(path, "/async-invoke/")) return bedrock;
  if (under(path, "/v1beta1/") || under(path, "/v1/projects/") || under(path, "/v1/publishers/")) return vertex;
  if (under(path, "/v1beta/") || under(path, "/v1alpha/") || under(path, "/upload/v1beta/") || gemini_method_path(path))
    return gemini;
  if (under(path, "/v1/messages/") || path == "/v1/complete") return anthropic;
  if (openai_path(path)) return openai;
  // Both OpenAI and Anthropic (and Gemini's v1) list models and keep files
  // here: Anthropic's SDKs always say anthropic-version; a provider's own
  // key says its provider; else OpenAI's.
  if (under(path, "/v1/models/") || under(path, "/v1/files/")) {
    if (c.anthropic_version) return anthropic;
    if (std::none_of(c.has.begin(), c.has.end(), [](bool b) { return b; })) return openai;
  }
  return {};
}

bool belongs(credential_kind k, std::string_view family) {
  const auto families = credential_families(k);
  return std::find(families.begin(), families.end(), family) != families.end();
}

// A token count whose body is its generate request's: the endpoint that reads it.
const endpoint* count_endpoint(std::string_view method, std::string_view path, std::string_view family) {
  if (method != "POST") return nullptr;
  if (family == anthropic && path.ends_with("/messages/count_tokens")) return endpoint_named("messages");
  // Vertex counts Gemini's tokens over a generateContent body (contents,
  // systemInstruction, tools).
  if (family == vertex && path.ends_with(":countTokens") && path.find("/publishers/google/models/") != std::string_view::npos)
    return endpoint_named("vertex-gemini");
  // Gemini's own :countTokens and Bedrock's CountTokens wrap the request
  // they count (count_envelope.hpp): the endpoint here reads the wrapped
  // request once receive has taken it out, or nothing, when it cannot.
  if (family == gemini && (path.starts_with("/v1beta/models/") || path.starts_with("/v1/models/")) &&
      path.ends_with(":countTokens"))
    return endpoint_named("gemini");
  if (family == bedrock && path.starts_with("/model/") && path.ends_with("/count-tokens"))
    return endpoint_named("bedrock-converse");
  return nullptr;
}

}  // namespace

std::span<const std::string_view> credential_families(credential_kind k) {
  switch (k) {
    case credential_kind::anthropic_key: return anthropic_families;
    case credential_kind::google_key: return google_families;
    case credential_kind::azure_key: return azure_families;
    case credential_kind::aws_signature: return aws_families;
  }
  return {};
}

std::string_view credential_field(credential_kind k) {
  switch (k) {
    case credential_kind::anthropic_key: return "x-api-key";
    case credential_kind::google_key: return "x-goog-api-key (or ?key=)";
    case credential_kind::azure_key: return "api-key";
    case credential_kind::aws_signature: return "AWS SigV4 signature";
  }
  return "credential";
}

bool upstream_route::has_foreign() const {
  return std::any_of(foreign.begin(), foreign.end(), [](bool b) { return b; });
}

gateway_mount gateway_mount_of(std::string_view target) {
  for (const auto& m : gateway_mounts) {
    if (!target.starts_with(m.prefix)) continue;
    const auto rest = target.substr(m.prefix.size());
    if (rest.empty() || rest.front() == '/' || rest.front() == '?') return {m.family, rest};
  }
  return {{}, target};
}

upstream_route route_request(std::string_view method, std::string_view target, const request_credentials& creds) {
  const auto mounted = gateway_mount_of(target);
  auto path = path_of(mounted.target);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  upstream_route r;
  r.family = mounted.family.empty() ? path_family(path, creds) : mounted.family;
  r.api = endpoint_for(method, target);
  // An endpoint speaks for its own family's paths only: an API of another
  // family that ends alike (OpenAI's /v1/threads/{id}/messages, Gemini's
  // OpenAI-compatible /v1beta/openai/chat/completions) is forwarded untouched.
  if (r.api && !r.family.empty() && r.api->upstream().name != r.family) r.api = nullptr;
  if (r.family.empty() && r.api) r.family = r.api->upstream().name;
  for (std::size_t k = 0; k < credential_kinds && r.family.empty(); ++k)
    if (creds.has[k]) r.family = credential_families(credential_kind(k)).front();
  if (r.family.empty()) r.family = creds.anthropic_version ? anthropic : default_endpoint().upstream().name;
  if (!r.api) {
    r.api = count_endpoint(method, path, r.family);
    r.count_tokens = r.api != nullptr;
  } else if (r.api->name() == "vertex-messages") {
    // Claude on Vertex counts tokens at the model "count-tokens", over a Messages body.
    r.count_tokens = path.find("/models/count-tokens:") != std::string_view::npos;
  }
  for (std::size_t k = 0; k < credential_kinds; ++k) r.foreign[k] = creds.has[k] && !belongs(credential_kind(k), r.family);
  return r;
}

}  // namespace gistproxy::rewrite
