// An upstream family: the provider a request goes to, with everything that
// names it. Its endpoints (endpoint.hpp) point at it; so do the paths of its
// APIs that no endpoint rewrites (OpenAI's /v1/threads/, Bedrock's
// /guardrail/), which are forwarded untouched but must still reach it and
// no one else. upstream_route.hpp reads these descriptions and knows no
// provider by name. Pure data: the built-in families are constants defined
// next to their endpoints (rewrite/dialects/*), an OpenAI-compatible
// provider's is built at start (dialects/compatible/, endpoint_registry.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace gistproxy::rewrite {

// The credentials that name their provider (a Bearer token does not: it
// belongs to whichever provider the path names).
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
  bool any_kind() const {
    for (bool b : has)
      if (b) return true;
    return false;
  }
};

// When a path claim names its family.
enum class claim_strength : std::uint8_t {
  path,  // the path alone (no two built-in families' such claims overlap)
  // Paths several families serve alike (/v1/models, /v1/files), where no
  // family's own claim names the path: the request must say whose it is.
  hinted,  // claimed when the request carries anthropic-version
  bare,    // claimed when the request carries no credential kind and no hint
};

// A path a family's APIs live under: a folder (ending in '/': the folder
// itself and everything under it) or, without a trailing '/', one path.
struct path_claim {
  std::string_view prefix;
  // A further test of the path (Gemini's model methods under /v1/models/); nullptr: the prefix suffices.
  bool (*also)(std::string_view path) = nullptr;
  claim_strength strength = claim_strength::path;
};

// Where an endpoint's requests go: endpoints of one family share an upstream
// (and its keep-alive pool), configured by --NAME-upstream.
struct upstream_family {
  std::string_view name;         // openai, anthropic
  std::string_view default_url;  // when neither --NAME-upstream nor --upstream is given; empty: none (a
                                 // request of the family is refused with a 502 naming the flag)
  // The signer: AWS services check a SigV4 signature over the body, so a body
  // gistproxy changes must be signed again, with gistproxy's own credentials
  // (empty: the family does not sign).
  std::string_view sigv4_service = {};
  // The paths that name the family, whether an endpoint reads them or not.
  std::span<const path_claim> paths = {};
  // The credential kinds that belong to it (a foreign one is refused: it must
  // reach no other provider).
  std::span<const credential_kind> credentials = {};
  // A gateway's mount of the family (LiteLLM's pass-through route, by its
  // provider id: "/anthropic/v1/messages" is Anthropic's /v1/messages),
  // which names the family whatever the method; empty: none.
  std::string_view gateway_mount = {};
  // Where neither path nor credential names a family, a request carrying
  // anthropic-version goes to the family that says so here.
  bool named_by_anthropic_version = false;
  // The prefix gistproxy serves the family under, replaced by the path of
  // its upstream URL when forwarded (a compatible provider's PREFIX); empty:
  // the target is forwarded whole, after the upstream URL's path.
  std::string_view local_prefix = {};
};

// Whether `path` (query removed) lies under the claim's prefix.
bool claims(const path_claim& claim, std::string_view path);

}  // namespace gistproxy::rewrite
