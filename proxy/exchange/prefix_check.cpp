// The live prefix check of an exchange: whether what went upstream keeps the
// provider's cached prefix of this conversation's previous turn, and if not,
// whose doing the break was (client, budget, age, offer, or a defect). The
// dialect says which members make up the prefix; the tracker remembers each
// conversation's last turn; exchange_stats counts the verdict.
#include "proxy/exchange/exchange.hpp"
#include "proxy/exchange/exchange_stats.hpp"

namespace gistproxy::proxy {
namespace {

// Fingerprints a body the client sent or gistproxy forwards. Items the
// conversation's previous turn had, within the bytes both share, keep the
// hashes they had (walk_reuse.hpp): what went upstream last time is compared
// with what goes now, byte for byte.
std::optional<rewrite::prefix_fingerprint> fingerprint(request_context& ctx, std::string_view body,
                                                       const rewrite::prefix_layout& layout) {
  auto* next = ctx.turns.next.get();
  if (!next) return rewrite::fingerprint_prefix(body, layout);
  const bool is_client = body.data() == ctx.in.request.body().data();
  const auto* prev = ctx.turns.previous.turn.get();
  const rewrite::json::walk_record* prev_walks = nullptr;
  std::size_t same = 0;
  if (prev) {
    // A previous turn forwarded as received: its forwarded bytes are its body.
    const bool prev_forwarded_is_body = prev->forwarded.empty();
    const std::string_view prev_doc = is_client || prev_forwarded_is_body ? std::string_view(prev->body) : prev->forwarded;
    prev_walks = is_client || prev_forwarded_is_body ? &prev->body_walks : &prev->forwarded_walks;
    same = is_client ? ctx.turns.previous.same_bytes : rewrite::json::common_prefix(prev_doc, body);
  }
  rewrite::json::reuse_scope scope(body, prev_walks, same, is_client ? &next->body_walks : &next->forwarded_walks);
  return rewrite::fingerprint_prefix(body, layout);
}

}  // namespace

void track_prefix(services& svc, request_context& ctx) {
  if (!svc.prefixes || !ctx.in.dialect || !ctx.in.facts) return;
  const auto layout = ctx.in.dialect->cache_prefix();
  auto client = fingerprint(ctx, ctx.in.request.body(), layout);
  std::optional<rewrite::prefix_fingerprint> forwarded;
  if (ctx.rw.body) {
    forwarded = fingerprint(ctx, *ctx.rw.body, layout);
    if (!forwarded) return;  // cannot tell what went upstream: no verdict
  }
  const auto& id = ctx.span.trace.bytes;
  const std::string_view conversation(reinterpret_cast<const char*>(id.data()), id.size());
  const auto verdict = svc.prefixes->observe(conversation, client, forwarded, ctx.rw.planned);
  exchange_stats(svc.metrics, ctx.in.api).prefix_verdict(verdict, ctx.in.group, ctx.span);
}

}  // namespace gistproxy::proxy
