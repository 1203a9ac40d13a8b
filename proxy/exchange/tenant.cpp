// Whose request this is: the tenant that scopes its blobs and its remembered
// turns, named by the credential the API's endpoint says carries it.
#include <boost/beast/core/string.hpp>

#include "proxy/exchange/phases.hpp"
#include "proxy/net/request_target.hpp"

namespace gistproxy::proxy {
namespace {

std::string_view trimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// The credential that names the request's tenant: the first of the fields
// the endpoint names that carries one. An Authorization value counts as sent,
// scheme included (so existing stores keep their tenants), but an empty one
// or a bare "Bearer" must not put a keyed request in the shared anonymous tenant.
std::string_view api_key_of(const client_request& r, const rewrite::endpoint& d) {
  const auto fields = d.credentials();
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
  if (!fields.query_parameter.empty()) return query_value(std::string_view(r.target()), fields.query_parameter);
  return {};
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
  // Requests gistproxy signs belong to the identity that signs them.
  const std::string_view sent = ctx.in.aws == aws_auth::proxy_signs && svc.aws ? std::string_view(svc.aws->access_key_id())
                                                                               : api_key_of(ctx.in.request, *ctx.in.endpoint);
  // A SigV4 signature changes with every request; its access key id does not.
  const auto access_key = sigv4_access_key(sent);
  return access_key.empty() ? sent : access_key;
}

std::string tenant_of_request(services& svc, request_context& ctx) {
  const auto key = tenant_credential(svc, ctx);
  auto& memo = ctx.memo;
  if (key.size() > connection_memo::limit) return rewrite::tenant_of(key);
  if (key != memo.api_key || memo.tenant.empty()) {
    memo.tenant = rewrite::tenant_of(key);
    memo.api_key = key;
  }
  return memo.tenant;
}


}  // namespace gistproxy::proxy
