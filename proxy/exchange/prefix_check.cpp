// The live prefix check of an exchange: whether what went upstream keeps the
// provider's cached prefix of this conversation's previous turn, and if not,
// whose doing the break was (client, budget, age, offer, or a defect). The
// wire format says which members make up the prefix; the tracker remembers each
// conversation's last turn; exchange_stats counts the verdict.
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"

namespace gistproxy::proxy {
namespace {

// Fingerprints through the turn memory (receive made one for the body it
// read, which a request with facts had): items the previous turn had, within
// the bytes both share, keep their hashes.
std::optional<rewrite::prefix_fingerprint> fingerprint(request_context& ctx, std::string_view body,
                                                       const rewrite::prefix_layout& layout, bool forwarded) {
  const auto& reuse = *ctx.turns.reuse;
  return forwarded ? reuse.fingerprint_forwarded(body, layout) : reuse.fingerprint_client(body, layout);
}

}  // namespace

void track_prefix(services& svc, request_context& ctx) {
  // A token count is sent beside the turns, not as one: no prefix to keep.
  if (!svc.prefixes || !ctx.in.endpoint || !ctx.in.facts || ctx.in.count_tokens) return;
  const auto layout = ctx.in.endpoint->wire().cache_prefix();
  auto client = fingerprint(ctx, ctx.in.request.body(), layout, false);
  std::optional<rewrite::prefix_fingerprint> forwarded;
  if (ctx.rw.body) {
    forwarded = fingerprint(ctx, *ctx.rw.body, layout, true);
    if (!forwarded) return;  // cannot tell what went upstream: no verdict
  }
  const auto& id = ctx.span.trace.bytes;
  const std::string_view conversation(reinterpret_cast<const char*>(id.data()), id.size());
  const auto verdict = svc.prefixes->observe(conversation, client, forwarded, ctx.rw.planned);
  exchange_stats(svc.metrics, ctx.in.api).prefix_verdict(verdict, ctx.in.group, ctx.span);
}

}  // namespace gistproxy::proxy
