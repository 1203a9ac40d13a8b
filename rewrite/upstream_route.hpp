// Where a request goes: the upstream family of every request, whether a
// endpoint rewrites it or not, and which of its credentials belong elsewhere.
// A provider's credential must reach only that provider: Anthropic's
// count_tokens with its x-api-key, Gemini's :countTokens with its
// x-goog-api-key, Bedrock's guardrails with a SigV4 signature must never fall
// through to the default (OpenAI) upstream.
//
// The path decides first, by a gateway's mount (/anthropic/, /gemini/,
// /vertex_ai/, ...) or its family's prefix (/openai/ Azure, /model/
// Bedrock, /v1/projects/ Vertex, /v1beta/ Gemini, /v1/messages Anthropic,
// ...); an endpoint then applies only on its own family's paths. Where the path
// says nothing, the endpoint's family, else the one family the credential
// belongs to, else the default family. A Bearer token belongs to whichever
// provider the path names (OpenAI keys, Google OAuth, Bedrock and Azure keys,
// Anthropic OAuth all travel that way). Pure: the proxy reads the headers.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

// The credentials that name their provider (a Bearer token does not).
enum class credential_kind : std::uint8_t {
  anthropic_key,  // x-api-key
  google_key,     // x-goog-api-key, or ?key= (Gemini, Vertex express mode)
  azure_key,      // api-key
  aws_signature,  // Authorization: SigV4 or SigV4a, a presigned query, X-Amz-Security-Token (field or query)
};
inline constexpr std::size_t credential_kinds = 4;

// What a request carries, by kind: set for fields with a non-empty value.
struct request_credentials {
  std::array<bool, credential_kinds> has{};
  bool anthropic_version = false;  // the anthropic-version header: a hint for paths both OpenAI and Anthropic serve
  bool has_kind(credential_kind k) const { return has[std::size_t(k)]; }
};

// The families a credential kind belongs to (google_key: gemini and vertex).
std::span<const std::string_view> credential_families(credential_kind k);
// The field a kind travels in, for error messages (never its value).
std::string_view credential_field(credential_kind k);

struct upstream_route {
  std::string_view family;         // the upstream family (upstream_families()) the request goes to
  const endpoint* api = nullptr;  // the endpoint that reads and rewrites it; nullptr: forwarded untouched
  // A token count in `api`'s body shape (Anthropic count_tokens, Vertex
  // :countTokens): rewritten as its turn would be, so the count matches what
  // the turn sends; its answer is passed back, never intercepted.
  bool count_tokens = false;
  // Credentials the request carries that do not belong to `family`, in kind order.
  std::array<bool, credential_kinds> foreign{};
  bool has_foreign() const;
};

upstream_route route_request(std::string_view method, std::string_view target, const request_credentials& creds);

// A gateway that mounts each provider's API under its name (LiteLLM's
// pass-through routes: "/anthropic/v1/messages" is Anthropic's /v1/messages,
// "/gemini/…", "/vertex_ai/…", "/bedrock/…", "/azure/…"): the mount names the
// family whatever the method, and the endpoints read the target under it.
struct gateway_mount {
  std::string_view family;  // empty: the target is mounted under no gateway prefix
  std::string_view target;  // the target as its provider spells it (the whole target when unmounted)
};
gateway_mount gateway_mount_of(std::string_view target);

}  // namespace gistproxy::rewrite
