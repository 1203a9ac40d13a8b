// GET /v1/blobs/{handle}: what read_blob would page in for the arguments in
// the query string (pattern, query, start_line, end_line, context_lines,
// offset), or with ?raw=1 the blob's exact bytes; HEAD says whether the blob
// exists. A framework that offloads through /v1/offload serves read_blob
// from here, in its own process. Every read re-hashes the bytes; a handle of
// another tenant is 404 like a handle nobody stored (its existence is never
// confirmed). A traceparent header joins the page_in span to a conversation.
#include <charconv>

#include <nlohmann/json.hpp>

#include "proxy/aws/aws_signing.hpp"
#include "proxy/exchange/blob_pager.hpp"
#include "proxy/exchange/phases.hpp"
#include "proxy/service/service.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/offload/base64.hpp"

namespace gistproxy::proxy {
namespace {

// The credential rule: the API named by ?api=, else the first API whose
// credential fields carry a credential by the proxy path's own rule (send
// the header you offloaded with). A field merely present does not choose:
// an empty Authorization beside x-api-key must read the key's tenant, as
// /v1/offload and the proxy path wrote it, not the keyless one.
const rewrite::endpoint* credential_rule(const rewrite::endpoint_registry& endpoints, const client_request& req,
                                         const std::optional<std::string>& api) {
  if (api) return endpoints.endpoint_named(*api);
  for (const auto* d : endpoints.endpoints())
    if (!endpoint_credential(req, *d).empty()) return d;
  return &endpoints.default_endpoint();
}

// read_blob's arguments from the query string, as the model would send them.
std::optional<std::string> page_arguments(std::string_view target, std::string_view handle, std::string& error) {
  nlohmann::json args = nlohmann::json::object();
  args["handle"] = handle;
  for (std::string_view name : {"pattern", "query"})
    if (auto v = query_parameter(target, name)) args[std::string(name)] = *v;
  for (std::string_view name : {"start_line", "end_line", "context_lines", "offset"}) {
    auto v = query_parameter(target, name);
    if (!v) continue;
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size()) {
      error = std::string(name) + " must be an integer";
      return std::nullopt;
    }
    args[std::string(name)] = n;
  }
  return args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<proxy_error> failure_of(const rewrite::page_result& page, std::string_view handle) {
  using rewrite::blob_error;
  if (page.ok) return std::nullopt;
  switch (page.error) {
    case blob_error::none:
    case blob_error::ambiguous: return proxy_error{error_kind::bad_request, page.text};
    case blob_error::not_found:
    case blob_error::expired:
      return proxy_error{error_kind::not_found, "no blob " + std::string(handle) + " for this credential"};
    case blob_error::integrity:
    case blob_error::too_large: return proxy_error{error_kind::store_integrity, page.text};
    case blob_error::io:
    case blob_error::full: return proxy_error{error_kind::store_unavailable, page.text};
  }
  return proxy_error{error_kind::internal, "unknown page-in result"};
}

// The digest's bytes of a handle the store has just re-hashed (lowercase hex).
std::string digest_bytes(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += char(nibble(hex[i]) * 16 + nibble(hex[i + 1]));
  return out;
}

awaitable<void> answer_raw(request_context& ctx, const rewrite::page_result& page) {
  http::response_header<> head;
  head.result(http::status::ok);
  head.set(http::field::content_type, "application/octet-stream");
  head.set(http::field::etag, "\"" + page.hash + "\"");
  const auto digest = rewrite::base64_encode(digest_bytes(page.hash));
  head.set("Digest", "sha-256=" + digest);  // RFC 3230
  head.set("Repr-Digest", "sha-256=:" + digest + ":");  // RFC 9530
  if (ctx.out.head_request()) head.set(http::field::content_length, std::to_string(page.text.size()));  // what GET would send
  co_await ctx.out.whole(head, page.text);
}

awaitable<void> answer_page(request_context& ctx, const rewrite::page_result& page) {
  http::response_header<> head;
  head.result(http::status::ok);
  head.set(http::field::content_type, "text/plain; charset=utf-8");
  head.set("x-gistproxy-handle", page.hash);
  co_await ctx.out.whole(head, page.text);
}

}  // namespace

awaitable<void> serve_blob(services& svc, request_context& ctx, std::string_view handle_in_target) {
  const std::string handle(handle_in_target);
  auto& req = ctx.in.request;
  ctx.in.api = "blobs";
  ctx.in.source = "api";
  receive(svc, ctx);
  const std::string target(req.target());
  const auto api = query_parameter(target, "api");
  const auto* rule = credential_rule(*svc.endpoints, req, api);
  std::optional<proxy_error> refused;
  std::string arguments, error;
  const bool raw = req.method() == http::verb::head || query_parameter(target, "raw") == "1";
  if (req.method() != http::verb::get && req.method() != http::verb::head)
    refused = proxy_error{error_kind::method_not_allowed, "/v1/blobs/{handle} takes GET or HEAD"};
  else if (!svc.store || !svc.offload)
    refused = proxy_error{error_kind::store_unavailable, "offloading is off (--offload off): there is no blob store"};
  else if (!query_decodes(target))
    refused = proxy_error{error_kind::bad_request, "the query string is not percent-encoded correctly"};
  else if (!rewrite::is_handle_prefix(handle))
    refused = proxy_error{error_kind::bad_request, "a handle is 16 to 64 lowercase hex characters"};
  else if (!rule)
    refused = proxy_error{error_kind::not_found, "api= names no API"};
  else if (!raw) {
    if (auto args = page_arguments(target, handle, error)) arguments = std::move(*args);
    else refused = proxy_error{error_kind::bad_request, error};
  }
  if (refused) {
    co_await ctx.out.error(*refused);
    co_return;
  }
  ctx.in.endpoint = rule;
  ctx.in.aws = aws_auth_of(req, *rule, svc.aws != nullptr);
  auto why = ambiguous_credential(req, *rule);
  if (ctx.in.aws == aws_auth::ambiguous && why.empty()) why = "more than one Authorization field";
  if (!why.empty()) {
    // A named error, never a temporary built inside the co_await: GCC 12
    // destroyed such a temporary twice (a double free under ASan).
    const proxy_error refusal{error_kind::bad_request, std::move(why)};
    co_await ctx.out.error(refusal);
    co_return;
  }
  ctx.in.tenant = tenant_of_request(svc, ctx);
  if (ctx.in.tenant == anonymous_tenant && !svc.cfg.offload_service_anonymous) {
    co_await ctx.out.error(keyless_refusal());
    co_return;
  }
  blob_pager pager(svc, ctx);
  // Not a conditional expression: GCC mishandles co_await in one (the result dies early).
  rewrite::page_result page;
  if (raw) page = co_await pager.raw(handle);
  else page = co_await pager.page(arguments);
  if (auto failed = failure_of(page, handle)) co_await ctx.out.error(*failed);
  else if (raw) co_await answer_raw(ctx, page);
  else co_await answer_page(ctx, page);
}

}  // namespace gistproxy::proxy
