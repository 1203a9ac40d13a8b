#include "rewrite/upstream_route.hpp"
#include "rewrite/endpoint_registry.hpp"
#include "rewrite/request_target.hpp"

#include <algorithm>

namespace gistproxy::rewrite {
namespace {

// Whether a claim of less than the path's own strength holds for this request.
bool hint_holds(claim_strength s, const request_credentials& c) {
  switch (s) {
    case claim_strength::path: return true;
    case claim_strength::hinted: return c.anthropic_version;
    case claim_strength::bare: return !c.anthropic_version && !c.any_kind();
  }
  return false;
}

// The family a path names; nullptr when it names none (or only a credential
// can tell). The first claim on the path itself, in the registry's claim
// order, names it (a provider's prefix inside a built-in folder is asked
// first); a path several families serve alike goes to the one the request's
// hint names.
const upstream_family* path_family(const endpoint_registry& registry, std::string_view path, const request_credentials& c) {
  const upstream_family* hinted = nullptr;
  for (const auto* f : registry.claim_order())
    for (const auto& claim : f->paths) {
      if (!claims(claim, path)) continue;
      if (claim.strength == claim_strength::path) return f;
      if (!hinted && hint_holds(claim.strength, c)) hinted = f;
    }
  return hinted;
}

bool belongs(credential_kind k, const upstream_family& f) {
  return std::find(f.credentials.begin(), f.credentials.end(), k) != f.credentials.end();
}

// A token count whose body is its generate request's, or wraps it: the
// endpoint of the family that reads it.
const endpoint* count_endpoint(const endpoint_registry& registry, std::string_view method, std::string_view path,
                               std::string_view family) {
  if (method != "POST") return nullptr;
  for (const auto* e : registry.endpoints())
    if (e->upstream().name == family && e->counts_tokens_at(path)) return e;
  return nullptr;
}

}  // namespace

bool claims(const path_claim& claim, std::string_view path) {
  const auto p = claim.prefix;
  const bool under = p.ends_with('/') ? path.starts_with(p) || path == p.substr(0, p.size() - 1) : path == p;
  return under && (!claim.also || claim.also(path));
}

std::vector<std::string_view> credential_families(credential_kind k) {
  std::vector<std::string_view> out;
  for (const auto* f : families())
    if (belongs(k, *f)) out.push_back(f->name);
  return out;
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
  for (const auto* f : families()) {
    const auto mount = f->gateway_mount;
    if (mount.empty() || !target.starts_with(mount)) continue;
    const auto rest = target.substr(mount.size());
    if (rest.empty() || rest.front() == '/' || rest.front() == '?') return {f->name, rest};
  }
  return {{}, target};
}

upstream_route route_request(std::string_view method, std::string_view target, const request_credentials& creds) {
  return route_request(endpoint_registry::builtin(), method, target, creds);
}

upstream_route route_request(const endpoint_registry& registry, std::string_view method, std::string_view target,
                             const request_credentials& creds) {
  const auto mounted = gateway_mount_of(target);
  auto path = path_of(mounted.target);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  upstream_route r;
  const upstream_family* family =
      mounted.family.empty() ? path_family(registry, path, creds) : registry.family_named(mounted.family);
  r.api = registry.endpoint_for(method, target);
  // An endpoint speaks for its own family's paths only: an API of another
  // family that ends alike (OpenAI's /v1/threads/{id}/messages, Gemini's
  // OpenAI-compatible /v1beta/openai/chat/completions) is forwarded untouched.
  if (r.api && family && r.api->upstream().name != family->name) r.api = nullptr;
  if (!family && r.api) family = &r.api->upstream();
  for (std::size_t k = 0; k < credential_kinds && !family; ++k)
    if (creds.has[k])
      for (const auto* f : registry.families())
        if (!family && belongs(credential_kind(k), *f)) family = f;
  for (const auto* f : registry.families())
    if (!family && creds.anthropic_version && f->named_by_anthropic_version) family = f;
  if (!family) family = &registry.default_endpoint().upstream();
  r.family = family->name;
  if (!family->local_prefix.empty() && target.starts_with(family->local_prefix)) r.local_prefix = family->local_prefix;
  if (r.api) {
    // A count some endpoint serves as a generate request (Claude on Vertex
    // counts at the model "count-tokens").
    r.count_tokens = r.api->counts_tokens_at(path);
  } else {
    r.api = count_endpoint(registry, method, path, r.family);
    r.count_tokens = r.api != nullptr;
  }
  for (std::size_t k = 0; k < credential_kinds; ++k)
    r.foreign[k] = creds.has[k] && !belongs(credential_kind(k), *family);
  return r;
}

}  // namespace gistproxy::rewrite
