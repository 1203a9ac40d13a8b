// The finish phase: the request's metrics, its span, the access-log line and
// (with --record) the recording, all from what the phases left in the context.
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/runtime/recorder.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::proxy {
namespace {

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

std::string path_of(const client_request& r) {
  auto target = std::string_view(r.target());
  return std::string(rewrite::path_of(target));
}

}  // namespace

// A connection usually asks for one model, so the last lookup is kept on it.
const rewrite::price_match* price_of(services& svc, request_context& ctx) {
  if (!svc.prices || !ctx.in.facts) return nullptr;
  auto& memo = ctx.memo;
  const auto& model = ctx.in.facts->model;
  if (model.size() > connection_memo::limit) return nullptr;  // no price table names such a model
  if (model != memo.priced_model || memo.priced_model.empty()) {
    memo.price = svc.prices->lookup(model);
    memo.priced_model = model;
  }
  return memo.price ? &*memo.price : nullptr;
}

namespace {

// The client's protocol, as the access log and the request metric name it
// (the h2 session marks its requests version 20; a WebSocket's channel names it).
std::string_view protocol_of(const request_context& ctx) {
  if (!ctx.protocol.empty()) return ctx.protocol;
  const unsigned version = ctx.in.request.version();
  return version >= 20 ? "HTTP/2" : version == 10 ? "HTTP/1.0" : "HTTP/1.1";
}

void count(services& svc, request_context& ctx, const std::string& status, std::chrono::nanoseconds total) {
  auto& m = svc.metrics;
  const auto api = ctx.in.api;
  const auto& reply = ctx.out.reply();
  const auto& usage = ctx.upstream.usage;
  const auto group = rewrite::group_label(ctx.in.group);
  exchange_stats::finished_request finished{status, group, protocol_of(ctx), total, ctx.upstream.wait,
                                            ctx.in.bytes_in, reply.bytes_out, {}, {}};
  if (reply.error) {
    finished.error_source = source_name(reply.error->source());
    finished.error_type = reply.error->type();
  }
  exchange_stats(m, api).request_finished(finished);
  exchange_stats::count_usage(m, api, group, usage);
  const auto* price = price_of(svc, ctx);
  exchange_stats::count_cost(m, ctx.span, api, group, price, usage,
                             {ctx.rw.tokens_saved, ctx.rw.tool_tokens, ctx.upstream.paged_in_tokens});
  if (!ctx.upstream.hop_usage.empty())  // an upstream answered
    ctx.ledger = exchange_stats::count_ledger(m, ctx.span, api, price, ctx.upstream.hop_usage, ctx.rw.changes);
  // The store's name for the tenant (16 hex digits of the credential's
  // SHA-256), never the credential: `gistproxy report` sums the ledger per
  // tenant from it, as /api/tenants does live.
  if (!ctx.in.tenant.empty()) ctx.span.set_text("gistproxy.tenant", ctx.in.tenant);
}

void end_span(services& svc, request_context& ctx, int status) {
  auto& s = ctx.span;
  const auto& reply = ctx.out.reply();
  const auto& usage = ctx.upstream.usage;
  s.set("http.response.status_code", std::int64_t(status));
  s.set("http.response.body.size", std::int64_t(reply.bytes_out));
  exchange_stats::set_usage_attributes(s, usage);
  if (reply.error) {
    s.set_text("error.type", reply.error->type());
    s.set_text("gistproxy.error.source", source_name(reply.error->source()));
    s.fail(reply.error->detail);
  } else if (status >= 500) {
    s.fail("upstream status " + std::to_string(status));
  }
  svc.tracer.end(s);
}

void log_access(services& svc, const request_context& ctx, int status, const std::string& trace_hex,
                std::chrono::nanoseconds total) {
  if (!svc.log.enabled(telemetry::log_level::info)) return;
  const auto& reply = ctx.out.reply();
  telemetry::access_record r;
  r.method = std::string(ctx.in.request.method_string());
  r.protocol = protocol_of(ctx);
  r.upstream_protocol = ctx.upstream.protocol;
  r.path = path_of(ctx.in.request);
  r.api = std::string(ctx.in.api);
  if (ctx.in.facts) r.model = ctx.in.facts->model;
  r.status = status;
  r.duration_ms = seconds(total) * 1e3;
  r.upstream_ms = seconds(ctx.upstream.wait) * 1e3;
  r.bytes_in = ctx.in.bytes_in;
  r.bytes_out = reply.bytes_out;
  r.trace_id = trace_hex;
  if (reply.error) {
    r.error_source = std::string(source_name(reply.error->source()));
    r.error_type = std::string(reply.error->type());
  }
  svc.log.access(r);
}

// The exchange is over: its bodies move to the recorder instead of being copied.
void record(services& svc, request_context& ctx, int status, const std::string& trace_hex,
            std::chrono::nanoseconds total) {
  auto& reply = ctx.out.reply();
  exchange_record r;
  r.unix_ms = svc.tracer.now() / 1'000'000;
  r.api = std::string(ctx.in.api);
  r.method = std::string(ctx.in.request.method_string());
  r.path = path_of(ctx.in.request);
  r.protocol = std::string(protocol_of(ctx));
  r.trace_id = trace_hex;
  if (ctx.in.facts) r.conversation_id = ctx.in.conversation.hex();  // replay follows serve's conversations
  r.status = status;
  r.hops = ctx.upstream.hops;
  r.read_backs = std::move(ctx.upstream.read_backs);
  r.duration_ms = seconds(total) * 1e3;
  r.upstream_ms = seconds(ctx.upstream.wait) * 1e3;
  r.request_body = std::move(ctx.in.request.body());
  if (ctx.rw.body) r.forwarded_body = std::move(*ctx.rw.body);
  if (reply.recorded) r.response_body = std::move(*reply.recorded);
  r.response_truncated = reply.recorded_truncated;
  svc.recorder->submit(std::move(r));
}

// One event for the live view: a bounded queue push (live_feed).
void tell_live_view(services& svc, request_context& ctx, int status, const std::string& trace_hex) {
  if (!svc.live || !ctx.in.endpoint) return;  // a conversation is a request in an API we know
  telemetry::live::turn_event e;
  e.trace_id = trace_hex;
  e.api = std::string(ctx.in.api);
  auto& live = ctx.live;
  // The client's model may be any bytes of any length: bounded, valid UTF-8.
  if (ctx.in.facts) e.model = telemetry::live::keep_text(ctx.in.facts->model, svc.live->limits().max_model_bytes, live.marks);
  e.group = std::string(rewrite::group_label(ctx.in.group));
  e.unix_ms = svc.tracer.now() / 1'000'000;
  e.status = status;
  e.input_tokens = ctx.upstream.usage.input_tokens > 0 ? std::uint64_t(ctx.upstream.usage.input_tokens) : 0;
  e.ledger = ctx.ledger;
  e.in_ledger = !ctx.upstream.hop_usage.empty();  // as count() decided
  e.tenant = ctx.in.tenant;
  e.offloads = live.offloads;
  e.kept_inline = live.kept_inline;
  e.tokens_before = live.tokens_before;
  e.tokens_after = live.tokens_after;
  e.new_offloads = std::move(live.new_offloads);
  e.new_offloads_dropped = live.new_offloads_dropped;
  e.page_ins = std::move(live.page_ins);
  e.page_ins_dropped = live.page_ins_dropped;
  e.marks = live.marks;
  svc.live->submit(std::move(e));
}

}  // namespace

void finish(services& svc, request_context& ctx) {
  const auto total = std::chrono::steady_clock::now() - ctx.started;
  const auto& reply = ctx.out.reply();
  const int status = reply.error && reply.error->kind == error_kind::client_disconnected ? 499 : reply.status;
  count(svc, ctx, std::to_string(status), total);
  const std::string trace_hex = ctx.span.trace.hex();
  end_span(svc, ctx, status);
  log_access(svc, ctx, status, trace_hex, total);
  tell_live_view(svc, ctx, status, ctx.in.conversation.hex());  // a row per conversation, whatever the trace
  // The recording is LLM traffic, for replay: the offload service's calls are not.
  if (svc.recorder && ctx.in.source == "proxy") record(svc, ctx, status, trace_hex, total);  // last: it takes the bodies
}

}  // namespace gistproxy::proxy
