// Part of receive: which upstream family a request goes to and which endpoint
// reads it (rewrite/upstream_route.hpp decides from the path and the kinds of
// credential the headers carry), and whether a credential would reach a
// provider it does not belong to. Values are only tested for being there:
// no credential is copied, kept or logged here.
#include <algorithm>

#include "proxy/aws/aws_signing.hpp"
#include "proxy/exchange/phases.hpp"
#include "rewrite/request_target.hpp"
#include "rewrite/text/field_value.hpp"

namespace gistproxy::proxy {
namespace {

using rewrite::credential_kind;

using rewrite::text::blank;

bool has_field(const client_request& r, std::string_view name) {
  for (auto [it, end] = r.equal_range(name); it != end; ++it)
    if (!blank(std::string_view(it->value()))) return true;
  return false;
}

rewrite::request_credentials credentials_of(const client_request& r) {
  rewrite::request_credentials c;
  auto set = [&](credential_kind k, bool present) { c.has[std::size_t(k)] = present; };
  set(credential_kind::anthropic_key, has_field(r, "x-api-key"));
  set(credential_kind::google_key, has_field(r, "x-goog-api-key") || !rewrite::query_value(std::string_view(r.target()), "key").empty());
  set(credential_kind::azure_key, has_field(r, "api-key"));
  set(credential_kind::aws_signature, aws_credentials_of(r).carried());
  c.anthropic_version = has_field(r, "anthropic-version");
  return c;
}

// The first credential that would reach a provider it does not belong to.
// One whose own family is served by the very same upstream URL (a single
// --upstream for every family, a gateway in front of all) reaches no other
// provider: forwarded.
std::optional<credential_kind> misdirected(const config& cfg, const rewrite::upstream_route& route) {
  if (!route.has_foreign()) return std::nullopt;
  const auto target = cfg.upstream_for(route.family);
  for (std::size_t k = 0; k < rewrite::credential_kinds; ++k) {
    if (!route.foreign[k]) continue;
    bool same_upstream = false;
    for (auto family : rewrite::credential_families(credential_kind(k)))
      same_upstream |= !target.empty() && cfg.upstream_for(family) == target;
    if (!same_upstream) return credential_kind(k);
  }
  return std::nullopt;
}

}  // namespace

rewrite::upstream_route route_of(const services& svc, const client_request& req) {
  return rewrite::route_request(*svc.endpoints, std::string_view(req.method_string()), std::string_view(req.target()),
                                credentials_of(req));
}

bool misdirects(const services& svc, const rewrite::upstream_route& route) {
  return misdirected(svc.cfg, route).has_value();
}

void route(services& svc, request_context& ctx) {
  auto& in = ctx.in;
  const auto r = route_of(svc, in.request);
  in.endpoint = r.api;
  in.family = r.family;
  in.local_prefix = r.local_prefix;
  in.count_tokens = r.count_tokens;
  in.misdirected = misdirected(svc.cfg, r);
}

std::optional<proxy_error> credential_mismatch(const request_context& ctx) {
  if (!ctx.in.misdirected) return std::nullopt;
  const auto kind = *ctx.in.misdirected;
  std::string owners;
  for (auto f : rewrite::credential_families(kind)) owners += (owners.empty() ? "" : " or ") + std::string(f);
  return proxy_error{error_kind::credential_mismatch,
                     "the request carries a " + std::string(rewrite::credential_field(kind)) + " credential, which belongs to " +
                         owners + ", on a path of the " + std::string(ctx.in.family) +
                         " APIs: not forwarded, so it reaches no other provider (send it to its own API's path, "
                         "or remove the credential that does not belong)"};
}

}  // namespace gistproxy::proxy
