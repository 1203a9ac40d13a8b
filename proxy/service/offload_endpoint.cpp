// POST /v1/offload/{api}: the rewrite phase of the proxy path, on a body a
// framework sends instead of routing its call through gistproxy. The body is
// received as if it had come to the API's own path (same decoding, tenant,
// conversation trace, control headers), rewritten by the same phase, and
// answered as JSON instead of being forwarded: the forwarded body
// byte for byte, whether read_blob is on offer, and each offload.
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/service/service.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/text/utf8.hpp"
#include "telemetry/access_log.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::proxy {
namespace {

constexpr std::size_t max_model_bytes = 256;

// A model id that can stand in a path: cloud ids and ARNs, never a query or
// a path step of its own.
bool usable_model(std::string_view m) {
  if (m.size() > max_model_bytes || m.find("..") != std::string_view::npos) return false;
  for (char c : m)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("._:@/-").find(c) == std::string_view::npos)
      return false;
  return true;
}

std::string known_apis(const rewrite::endpoint_registry& endpoints) {
  std::string out;
  for (const auto* d : endpoints.endpoints()) out += (out.empty() ? "" : ", ") + std::string(d->name());
  return out;
}

// Why the request cannot be served, before anything is read; empty if it can.
// On success the request's target becomes the API's own path (the query kept:
// Gemini's ?key= names a tenant).
std::optional<proxy_error> retarget(const rewrite::endpoint_registry& endpoints, client_request& req, std::string_view api) {
  if (req.method() != http::verb::post)
    return proxy_error{error_kind::method_not_allowed, "/v1/offload/{api} takes POST"};
  const auto* endpoint = endpoints.endpoint_named(api);
  if (!endpoint)
    return proxy_error{error_kind::not_found, "no API named '" + std::string(api.substr(0, 64)) + "': one of " + known_apis(endpoints)};
  const std::string target(req.target());
  if (!query_decodes(target)) return proxy_error{error_kind::bad_request, "the query string is not percent-encoded correctly"};
  const auto model = query_parameter(target, "model").value_or("");
  if (!usable_model(model)) return proxy_error{error_kind::bad_request, "model= is not a model id"};
  auto path = endpoint->request_path(model);
  if (auto q = target.find('?'); q != std::string::npos) path += (path.find('?') == std::string::npos ? "?" : "&") + target.substr(q + 1);
  req.target(path);
  return std::nullopt;
}

// `"name":"text"` for bytes the client sent, copied exactly. A JSON string
// holds only valid UTF-8, and U+FFFD in place of the bytes would be another
// value said as the client's (a call id that matches nothing): bytes that
// are not UTF-8 are answered `"name":null,"name_base64":"..."`, the exact
// bytes, so a reader of `name` sees that it must look further.
void append_client_bytes(std::string& out, std::string_view name, std::string_view bytes) {
  out += '"';
  out += name;
  if (rewrite::text::is_valid_utf8(bytes)) {
    out += "\":";
    telemetry::append_json_string(out, bytes);
  } else {
    out += "\":null,\"";
    out += name;
    out += "_base64\":\"" + rewrite::base64_encode(bytes) + "\"";
  }
}

std::string answer_of(const request_context& ctx, const rewrite::rewrite_report* report, std::string_view outcome) {
  std::string out = "{\"api\":";
  telemetry::append_json_string(out, ctx.in.api);
  out += ',';
  append_client_bytes(out, "model", ctx.in.facts ? std::string_view(ctx.in.facts->model) : std::string_view());
  out += ",\"trace_id\":";
  telemetry::append_json_string(out, ctx.span.trace.hex());
  out += ",\"outcome\":";
  telemetry::append_json_string(out, outcome);
  out += ",\"read_blob\":";
  if (ctx.offers_read_blob()) {
    out += "{\"offered\":true,\"tool_name\":";
    telemetry::append_json_string(out, ctx.rw.intercept_tool);
    out += "}";
  } else {
    out += "{\"offered\":false}";
  }
  out += ",\"tokens_saved\":" + std::to_string(ctx.rw.tokens_saved) + ",\"offloads\":[";
  if (report)
    for (std::size_t i = 0; i < report->offloads.size(); ++i) {
      const auto& o = report->offloads[i];
      out += i ? ",{\"handle\":" : "{\"handle\":";
      telemetry::append_json_string(out, o.hash);
      out += ",\"bytes\":" + std::to_string(o.bytes) + ',';
      append_client_bytes(out, "kind", o.kind);  // an image's media type is the client's
      out += ',';
      append_client_bytes(out, "tool", o.tool_name);
      out += ',';
      append_client_bytes(out, "call_id", o.call_id);
      out += ",\"tokens_before\":" + std::to_string(o.tokens_before) + ",\"tokens_after\":" + std::to_string(o.tokens_after) +
             ",\"deduplicated\":" + (o.deduplicated ? "true" : "false") + "}";
    }
  // The body byte for byte: one with raw invalid bytes a client sent is
  // answered as base64 and said so, never quietly as U+FFFD.
  out += "],";
  append_client_bytes(out, "body", ctx.forwarded_body());
  out += "}";
  return out;
}

// The outcome label of the answer: what the proxy path would have done
// (the handling receive decided, then what the rewrite made of the body).
std::string_view outcome_of(const request_context& ctx) {
  switch (ctx.in.handling.why) {
    case rewrite::handling_why::bypass: return "bypass";
    case rewrite::handling_why::control: return "control";
    default: return ctx.rw.body ? "rewritten" : "unchanged";
  }
}

}  // namespace

awaitable<bool> serve_offload(services& svc, request_context& ctx, std::string_view api_in_target) {
  const std::string api(api_in_target);  // the target is about to change
  ctx.in.source = "api";
  const std::string sent_target(ctx.in.request.target());
  auto refused = retarget(*svc.endpoints, ctx.in.request, api);
  receive(svc, ctx);
  // Logs, spans and metrics name the service's path, not the API's it stood in for.
  ctx.in.request.target(sent_target);
  ctx.span.set_text("url.path", rewrite::path_of(sent_target));
  if (!refused && !ctx.in.controls.error.empty()) refused = proxy_error{error_kind::bad_request, ctx.in.controls.error};
  if (!refused && ctx.in.endpoint && ctx.in.tenant == anonymous_tenant && !svc.cfg.offload_service_anonymous)
    refused = keyless_refusal();
  if (!refused && ctx.in.endpoint != svc.endpoints->endpoint_named(api))
    refused = proxy_error{error_kind::bad_request, "model= does not fit the " + api + " API's path"};
  if (!refused && ctx.in.body_encoded)
    refused = proxy_error{error_kind::unsupported_encoding, "the body's Content-Encoding cannot be decoded"};
  if (!refused && !ctx.in.facts)
    refused = proxy_error{error_kind::bad_request, "the body is not a " + api + " request body"};
  if (refused) {
    co_await ctx.out.error(*refused);
    co_return false;
  }
  // A control-group conversation is forwarded as sent: its answer is the
  // body as received (decoded), nothing offloaded.
  ctx.in.sent_body.reset();
  rewrite::rewrite_report report;
  try {
    co_await rewrite(svc, ctx, &report);
  } catch (const std::exception&) {
    // As on the proxy path: what could not be rewritten goes on as sent.
    ctx.rw.body.reset();
    ctx.rw.intercept_tool.clear();
    report = {};
    exchange_stats(svc.metrics, ctx.in.api, ctx.in.source).degraded_mode(degraded::internal);
  }
  std::string answer = answer_of(ctx, &report, outcome_of(ctx));
  co_await answer_json(ctx, 200, std::move(answer));
  co_return true;  // a turn to remember: the conversation's next call reuses its work
}

awaitable<void> answer_json(request_context& ctx, unsigned status, std::string body) {
  http::response_header<> head;
  head.result(status);
  head.set(http::field::content_type, "application/json");
  co_await ctx.out.whole(head, body);
}

}  // namespace gistproxy::proxy
