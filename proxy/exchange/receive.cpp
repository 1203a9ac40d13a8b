// The receive phase: which API the request speaks (its endpoint and wire format), its model
// and streaming flag, a decoded body to inspect, the conversation it belongs
// to (its opening, credential and chain of turns: never the client's
// traceparent), and its trace: the client's traceparent wins; else the
// conversation names the trace, so every turn of it shares one trace id.
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/exchange/stored_state.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/body_encoding.hpp"
#include "rewrite/handling.hpp"
#include "rewrite/request_target.hpp"
#include "rewrite/upstream_route.hpp"

namespace gistproxy::proxy {
namespace {

// Decodes a gzip/zstd request body in place (so it can be inspected and
// rewritten); false when the body must be forwarded as it came.
bool decode_body(services& svc, request_context& ctx) {
  auto& req = ctx.in.request;
  auto it = req.find(http::field::content_encoding);
  if (it == req.end()) return true;
  if (!svc.offload) return false;
  std::string decoded;
  auto status = rewrite::decode_body(std::string_view(it->value()), req.body(), svc.cfg.max_body_bytes, decoded);
  if (status != rewrite::decode_status::ok) {
    ctx.in.body_encoded = true;
    exchange_stats(svc.metrics, ctx.in.api)
        .degraded_mode(status == rewrite::decode_status::unsupported ? degraded::unsupported_encoding
                                                                     : degraded::corrupt_encoding);
    return false;
  }
  if (svc.cfg.control_basis_points > 0) {  // a control conversation forwards what was sent
    ctx.in.sent_encoding = std::string(it->value());
    ctx.in.sent_body = std::move(req.body());
  }
  req.body() = std::move(decoded);
  req.erase(http::field::content_encoding);
  return true;
}

// The conversation's opening as an id: a hash of what opens it (system
// prompt, first user message) and of the tenant's credential. Stable turn
// after turn and on every replica, but nobody without the key can confirm a
// guessed prompt by hashing it (the live view shows these ids to anyone who
// reaches it).
telemetry::trace_id opening_id(std::string_view conversation, std::string_view credential, connection_memo& memo) {
  std::string key;
  key.reserve(conversation.size() + credential.size() + 1);
  key.append(conversation).append(1, '\0').append(credential);
  if (key.size() <= connection_memo::limit && key == memo.conversation_key) return memo.trace;
  telemetry::trace_id trace;
  trace.bytes = rewrite::opening_of_joined(key);  // as replay names it (rewrite::opening_of)
  if (key.size() <= connection_memo::limit) {
    memo.conversation_key = key;
    memo.trace = trace;
  }
  return trace;
}

// Which conversation the body is a turn of (rewrite/conversation): under its
// opening, the one whose latest turn it extends. A token count is no turn.
void identify_conversation(services& svc, request_context& ctx) {
  auto& in = ctx.in;
  in.conversation = opening_id(in.facts->conversation_key, tenant_credential(svc, ctx), ctx.memo);
  if (in.count_tokens || !ctx.turns.reuse) return;
  in.client_prefix = ctx.turns.reuse->fingerprint_client(in.request.body(), in.endpoint->wire().cache_prefix());
  if (!svc.conversations || !in.client_prefix) return;
  const auto turn = svc.conversations->resolve(in.conversation.bytes, {in.client_prefix->head, in.client_prefix->cumulative});
  in.conversation.bytes = turn.id;
  in.retry = turn.retry;
}

telemetry::trace_id trace_of(services& svc, request_context& ctx, telemetry::span_id& parent) {
  const auto& in = ctx.in;
  if (in.client_parent) {
    parent = in.client_parent->parent;
    return in.client_parent->trace;
  }
  if (in.facts) return in.conversation;
  return svc.tracer.new_trace_id();
}

// The body as its wire format reads it: decoded first unless its bytes are the
// client's to keep (then read only if they came plain), and walked with the
// conversation's previous turn where that may help a rewrite.
void read_body(services& svc, request_context& ctx) {
  auto& in = ctx.in;
  auto& req = in.request;
  const bool as_sent = rewrite::bytes_kept_as_sent(in.controls.bypass, in.aws == aws_auth::client_signed);
  if (as_sent) in.body_encoded = req.find(http::field::content_encoding) != req.end();
  if (in.body_encoded || (!as_sent && !decode_body(svc, ctx))) return;
  if (in.count_tokens) unwrap_count(ctx);
  if (!in.endpoint) return;
  if (!as_sent && !in.count_tokens) map_previous_response(svc, ctx);  // the id the client holds, as kept
  // The wire format reads the body; where the conversation's previous turn shares
  // its start, what was walked then is stepped over (walk_reuse.hpp).
  recall_turn(svc, ctx, !as_sent);
  in.facts = ctx.turns.reuse->inspect(req.body());
}

// The one place that decides how the body may be handled (rewrite/handling.hpp).
rewrite::handling handling_of(const services& svc, const received& in) {
  return rewrite::handling_of({.known_api = in.endpoint != nullptr,
                               .offload_on = svc.offload != nullptr,
                               .bypass = in.controls.bypass,
                               .client_signed = in.aws == aws_auth::client_signed,
                               .control = in.group == rewrite::experiment_group::control,
                               .decoded = !in.body_encoded,
                               .parsed = in.facts.has_value(),
                               .answer_interceptable = !in.facts || in.facts->answer_interceptable});
}

}  // namespace

void receive(services& svc, request_context& ctx) {
  auto& in = ctx.in;
  auto& req = in.request;
  in.bytes_in = req.body().size();
  in.controls = read_request_controls(req, svc.cfg);
  route(svc, ctx);
  read_stored(svc, ctx);  // GET or DELETE of a stored Responses response
  if (in.endpoint) {
    in.api = in.endpoint->name();
    in.aws = aws_auth_of(req, *in.endpoint, svc.aws != nullptr);
    if (in.aws == aws_auth::ambiguous && in.controls.error.empty())
      in.controls.error = "more than one Authorization field: send one credential (gistproxy cannot tell whose request it is)";
    if (in.controls.error.empty()) in.controls.error = ambiguous_credential(req, *in.endpoint);
    in.tenant = tenant_of_request(svc, ctx);
    read_body(svc, ctx);
    if (in.facts) {
      in.endpoint->inspect_target(rewrite::gateway_mount_of(std::string_view(req.target())).target, *in.facts);
      // A deployment or inference profile stands for the model it serves.
      if (auto alias = svc.cfg.model_aliases.find(in.facts->model); alias != svc.cfg.model_aliases.end())
        in.facts->model = alias->second;
    }
  }
  if (auto it = req.find("traceparent"); it != req.end())
    in.client_parent = telemetry::parse_traceparent(std::string_view(it->value()));

  if (in.facts) identify_conversation(svc, ctx);
  telemetry::span_id parent;
  const auto trace = trace_of(svc, ctx, parent);
  if (!in.facts) in.conversation = trace;
  // Conversations only: a request we cannot read has no stable identity.
  if (in.facts) in.group = rewrite::group_of(in.conversation.bytes, svc.cfg.control_basis_points);
  in.handling = handling_of(svc, in);
  auto& s = ctx.span = svc.tracer.start("gistproxy.request", telemetry::span_kind::server, trace, parent);
  auto target = std::string_view(req.target());
  s.set_text("http.request.method", req.method_string());
  s.set_text("url.path", rewrite::path_of(target));
  s.set_text("gistproxy.api", in.api);
  s.set_text("gistproxy.group", rewrite::group_label(in.group));
  s.set_text("gistproxy.handling", rewrite::label(in.handling.why));
  s.set("http.request.body.size", std::int64_t(in.bytes_in));
  s.set_text("gistproxy.upstream_family", in.family);
  if (in.count_tokens) s.set("gistproxy.count_tokens", true);
  if (in.endpoint) {
    s.set_text("gen_ai.operation.name", in.endpoint->wire().operation_name());
    s.set_text("gen_ai.provider.name", in.endpoint->provider_name());
    s.set("gistproxy.body_parsed", in.facts.has_value());
  }
  if (in.facts) {
    s.set_text("gen_ai.request.model", in.facts->model);
    s.set("gistproxy.stream", in.facts->stream);
    if (s.recording) s.set("gen_ai.conversation.id", in.conversation.hex());
    if (in.retry) s.set("gistproxy.retry", true);
  }
}

}  // namespace gistproxy::proxy
