// The live prefix check of an exchange: whether what went upstream keeps the
// provider's cached prefix of this conversation's previous turn, and if not,
// whose doing the break was (client, budget, age, offer, or a defect). The
// wire format says which members make up the prefix; the tracker remembers each
// conversation's last turn; exchange_stats counts the verdict.
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"

namespace gistproxy::proxy {
void track_prefix(services& svc, request_context& ctx) {
  // A token count is sent beside the turns, not as one: no prefix to keep.
  if (!svc.prefixes || !ctx.in.endpoint || !ctx.in.facts || ctx.in.count_tokens) return;
  const auto layout = ctx.in.endpoint->wire().cache_prefix();
  // The client's was made by receive (it names the conversation); what went
  // upstream is fingerprinted through the turn memory: items the previous
  // turn had, within the bytes both share, keep their hashes.
  const auto& client = ctx.in.client_prefix;
  std::optional<rewrite::prefix_fingerprint> forwarded;
  if (ctx.rw.body) {
    forwarded = ctx.turns.reuse->fingerprint_forwarded(*ctx.rw.body, layout);
    if (!forwarded) return;  // cannot tell what went upstream: no verdict
  }
  const auto& id = ctx.in.conversation.bytes;
  const std::string_view conversation(reinterpret_cast<const char*>(id.data()), id.size());
  const auto verdict = svc.prefixes->observe(conversation, client, forwarded, ctx.rw.planned);
  exchange_stats(svc.metrics, ctx.in.api).prefix_verdict(verdict, ctx.in.group, ctx.span);
}

}  // namespace gistproxy::proxy
