// The rewrite phase of an exchange: decode the body if needed, run the offload
// engine (on the store pool when the body is large enough to hold outputs
// worth storing), and turn its report into compaction spans and metrics.
// Every failure here is fail-open: the client's bytes go upstream as sent.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "proxy/compaction_span.hpp"
#include "proxy/exchange.hpp"
#include "rewrite/body_encoding.hpp"

namespace gistproxy::proxy {
namespace {

// Below this size a body cannot hold an output worth offloading at sane
// thresholds, so the engine runs inline instead of hopping to the store pool.
constexpr std::size_t inline_rewrite_limit = 8 * 1024;

std::string_view trimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// The credential that names the request's tenant: the Authorization value
// (as sent, scheme included, so existing stores keep their tenants) when it
// carries a credential, else x-api-key. An empty Authorization, or a bare
// "Bearer", must not put a keyed request in the shared anonymous tenant.
std::string_view api_key_of(const client_request& r) {
  if (auto it = r.find(http::field::authorization); it != r.end()) {
    auto v = trimmed(std::string_view(it->value()));
    auto space = v.find(' ');
    if (!v.empty() && !(space == std::string_view::npos && beast::iequals(v, "bearer")) &&
        !(space != std::string_view::npos && trimmed(v.substr(space)).empty()))
      return v;
  }
  if (auto it = r.find("x-api-key"); it != r.end()) return trimmed(std::string_view(it->value()));
  return {};
}

}  // namespace

// Decodes a gzip/zstd request body in place (so it can be inspected and
// rewritten); false when the body must be forwarded as it came.
bool exchange::decode_body(request_context& ctx) {
  auto it = ctx.request.find(http::field::content_encoding);
  if (it == ctx.request.end()) return true;
  if (!svc_.offload) return false;
  std::string decoded;
  auto status = rewrite::decode_body(std::string_view(it->value()), ctx.request.body(), svc_.cfg.max_body_bytes, decoded);
  if (status != rewrite::decode_status::ok) {
    ctx.body_encoded = true;
    svc_.metrics.rewrite_failures
        .labels({ctx.api, status == rewrite::decode_status::unsupported ? "unsupported_encoding" : "corrupt_encoding"})
        .inc();
    return false;
  }
  ctx.request.body() = std::move(decoded);
  ctx.request.erase(http::field::content_encoding);
  return true;
}

awaitable<void> exchange::rewrite(request_context& ctx) {
  auto* engine = svc_.offload;
  if (!engine || !ctx.dialect || ctx.body_encoded) co_return;
  auto& m = svc_.metrics;
  if (!ctx.facts) {
    m.rewrite_failures.labels({ctx.api, "unparsable"}).inc();
    m.rewrites.labels({ctx.api, "failed"}).inc();
    co_return;
  }
  ctx.tenant = rewrite::tenant_of(api_key_of(ctx.request));
  const std::string& body = ctx.request.body();
  rewrite::rewrite_result result;
  if (body.size() < inline_rewrite_limit) {
    result = engine->rewrite(*ctx.dialect, body, ctx.tenant);
  } else {
    // Hashing, compressing and fsync-ing blobs must not stall this I/O thread.
    result = co_await asio::co_spawn(
        svc_.store_pool->get_executor(),
        [&]() -> awaitable<rewrite::rewrite_result> { co_return engine->rewrite(*ctx.dialect, body, ctx.tenant); },
        asio::use_awaitable);
  }
  if (svc_.churn) ctx.turn = svc_.churn->begin_turn(ctx.span.trace.hex());
  record_rewrite(ctx, result.report);
  if (result.report.tool_injected) ctx.intercept_tool = result.report.tool_name;
  if (result.report.outcome == rewrite::rewrite_outcome::rewritten) ctx.rewritten_body = std::move(result.body);
}

void exchange::record_rewrite(request_context& ctx, const rewrite::rewrite_report& report) {
  auto& m = svc_.metrics;
  switch (report.outcome) {
    case rewrite::rewrite_outcome::rewritten: m.rewrites.labels({ctx.api, "rewritten"}).inc(); break;
    case rewrite::rewrite_outcome::unchanged: m.rewrites.labels({ctx.api, "unchanged"}).inc(); break;
    case rewrite::rewrite_outcome::unparsable:
      m.rewrites.labels({ctx.api, "failed"}).inc();
      m.rewrite_failures.labels({ctx.api, "unparsable"}).inc();
      break;
  }
  if (report.skipped_too_large) m.rewrite_failures.labels({ctx.api, "too_large"}).inc(report.skipped_too_large);
  if (report.skipped_lossy) m.rewrite_failures.labels({ctx.api, "lossy"}).inc(report.skipped_lossy);
  if (report.store_failures) m.rewrite_failures.labels({ctx.api, "store_error"}).inc(report.store_failures);

  std::uint64_t saved = 0;
  for (const auto& o : report.offloads) {
    m.offloads.labels({ctx.api, o.kind}).inc();
    m.offload_tokens_before.labels({ctx.api}).inc(o.tokens_before);
    m.offload_tokens_after.labels({ctx.api}).inc(o.tokens_after);
    m.offloaded_bytes.labels({ctx.api}).inc(o.bytes);
    if (o.deduplicated) m.dedupe_hits.labels({ctx.api}).inc();
    if (svc_.churn) svc_.churn->offloaded(ctx.span.trace.hex(), o.hash, ctx.turn);
    saved += o.tokens_before > o.tokens_after ? o.tokens_before - o.tokens_after : 0;

    emit_compaction_span(svc_.tracer, ctx.span, o);
  }
  ctx.span.set("gistproxy.offloads", std::int64_t(report.offloads.size()));
  ctx.span.set("gistproxy.tokens_saved", saved);
  ctx.span.set("gistproxy.read_blob_injected", report.tool_injected);
}

}  // namespace gistproxy::proxy
