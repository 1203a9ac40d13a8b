// Where a request goes: the upstream family of every request, whether a
// endpoint rewrites it or not, and which of its credentials belong elsewhere.
// A provider's credential must reach only that provider: Anthropic's
// count_tokens with its x-api-key, Gemini's :countTokens with its
// x-goog-api-key, Bedrock's guardrails with a SigV4 signature must never fall
// through to the default (OpenAI) upstream.
//
// The path decides first, by a gateway's mount (/anthropic/, /gemini/,
// /vertex_ai/, ...) or the families' path claims (upstream_family.hpp:
// /openai/ Azure, /model/ Bedrock, /v1/projects/ Vertex, /v1beta/ Gemini,
// /v1/messages Anthropic, a --compatible PREFIX, which is asked before the
// built-in folder it may lie in, ...); an endpoint then
// applies only on its own family's paths. Where the path says nothing, the
// endpoint's family, else the first family the credential belongs to, else
// the family anthropic-version names, else the default family. A Bearer
// token belongs to whichever provider the path names (OpenAI keys, Google
// OAuth, Bedrock and Azure keys, Anthropic OAuth all travel that way). Every
// fact about a provider is its family's or its endpoints' own: this file
// names none. Pure: the proxy reads the headers.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "rewrite/endpoint.hpp"

namespace gistproxy::rewrite {

class endpoint_registry;

// The families a credential kind belongs to, in family order (google_key: gemini and vertex).
std::vector<std::string_view> credential_families(credential_kind k);
// The field a kind travels in, for error messages (never its value).
std::string_view credential_field(credential_kind k);

struct upstream_route {
  std::string_view family;         // the upstream family (upstream_families()) the request goes to
  const endpoint* api = nullptr;  // the endpoint that reads and rewrites it; nullptr: forwarded untouched
  // A token count in `api`'s body shape (Anthropic count_tokens, Vertex
  // :countTokens): rewritten as its turn would be, so the count matches what
  // the turn sends; its answer is passed back, never intercepted.
  bool count_tokens = false;
  // The start of the target that names the family at gistproxy only (a
  // compatible provider's PREFIX): replaced by the upstream URL's path when
  // forwarded. Empty: the whole target is the provider's.
  std::string_view local_prefix;
  // Credentials the request carries that do not belong to `family`, in kind order.
  std::array<bool, credential_kinds> foreign{};
  bool has_foreign() const;
};

upstream_route route_request(const endpoint_registry& registry, std::string_view method, std::string_view target,
                             const request_credentials& creds);
// Over the built-in endpoints alone.
upstream_route route_request(std::string_view method, std::string_view target, const request_credentials& creds);

// A gateway that mounts each provider's API under its name (LiteLLM's
// pass-through routes, upstream_family::gateway_mount: "/anthropic/v1/messages"
// is Anthropic's /v1/messages): the mount names the family whatever the
// method, and the endpoints read the target under it.
struct gateway_mount {
  std::string_view family;  // empty: the target is mounted under no gateway prefix
  std::string_view target;  // the target as its provider spells it (the whole target when unmounted)
};
gateway_mount gateway_mount_of(std::string_view target);

}  // namespace gistproxy::rewrite
