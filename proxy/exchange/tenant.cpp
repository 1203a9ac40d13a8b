// Whose request this is: the tenant that scopes its blobs and its remembered
// turns, named by the credential the API's endpoint says carries it.
#include <boost/beast/core/string.hpp>

#include "proxy/exchange/phases.hpp"
#include "rewrite/request_target.hpp"
#include "rewrite/text/field_value.hpp"

namespace gistproxy::proxy {
namespace {

using rewrite::text::trimmed;

// The credential that names the request's tenant: the first of the fields
// the endpoint names that carries one. An Authorization value counts as sent,
// scheme included (so existing stores keep their tenants), but an empty one
// or a bare "Bearer" must not put a keyed request in the shared anonymous tenant.
std::string_view api_key_of(const client_request& r, const rewrite::endpoint& d) {
  const auto& fields = d.credentials();
  for (auto name : fields.headers) {
    auto it = r.find(name);
    if (it == r.end()) continue;
    auto v = trimmed(std::string_view(it->value()));
    if (v.empty()) continue;
    if (beast::iequals(name, "authorization")) {
      auto space = v.find(' ');
      if ((space == std::string_view::npos && beast::iequals(v, "bearer")) ||
          (space != std::string_view::npos && trimmed(v.substr(space)).empty()))
        continue;
    }
    return v;
  }
  if (!fields.query_parameter.empty()) return rewrite::query_value(std::string_view(r.target()), fields.query_parameter);
  return {};
}

// The credential that names an AWS request's tenant: its Authorization (a
// SigV4 or SigV4a signature names its access key id below), else what its
// query or session token says; a presigned request is its signer's, never
// the shared anonymous tenant.
std::string_view aws_key_of(const client_request& r, const rewrite::endpoint& d) {
  const auto sent = api_key_of(r, d);
  return sent.empty() ? aws_credentials_of(r).identity() : sent;
}

// The credential the fields of `by` carry (the request's own endpoint, or
// the one whose fields name a read of stored state's tenant).
std::string_view credential_by(services& svc, const request_context& ctx, const rewrite::endpoint& by) {
  // Requests gistproxy signs belong to the identity that signs them.
  const auto& in = ctx.in;
  const std::string_view sent = in.aws == aws_auth::proxy_signs && svc.aws ? std::string_view(svc.aws->access_key_id())
                                : in.aws != aws_auth::not_aws          ? aws_key_of(in.request, by)
                                                                       : api_key_of(in.request, by);
  // A SigV4 signature changes with every request; its access key id does not.
  const auto access_key = rewrite::sigv4_access_key(sent);
  return access_key.empty() ? sent : access_key;
}

// The tenant the key names, remembered for the connection's next request.
std::string tenant_named(connection_memo& memo, std::string_view key) {
  if (key.size() > connection_memo::limit) return rewrite::tenant_of(key);
  if (key != memo.api_key || memo.tenant.empty()) {
    memo.tenant = rewrite::tenant_of(key);
    memo.api_key = key;
  }
  return memo.tenant;
}

}  // namespace

std::string_view endpoint_credential(const client_request& r, const rewrite::endpoint& d) { return api_key_of(r, d); }

std::string ambiguous_credential(const client_request& r, const rewrite::endpoint& d) {
  for (auto name : d.credentials().headers)
    if (r.count(name) > 1)
      return "more than one " + std::string(name) +
             " field: send one credential (gistproxy cannot tell whose request it is)";
  return {};
}

std::string_view tenant_credential(services& svc, const request_context& ctx) {
  const auto& in = ctx.in;
  if (in.endpoint && in.endpoint == in.tenant_credential_of) return in.tenant_credential;
  return credential_by(svc, ctx, *in.endpoint);
}

std::string tenant_of_request(services& svc, request_context& ctx) {
  auto& in = ctx.in;
  in.tenant_credential = credential_by(svc, ctx, *in.endpoint);
  in.tenant_credential_of = in.endpoint;
  return tenant_named(ctx.memo, in.tenant_credential);
}

std::string tenant_of_request(services& svc, request_context& ctx, const rewrite::endpoint& by) {
  return tenant_named(ctx.memo, credential_by(svc, ctx, by));
}

}  // namespace gistproxy::proxy
