// The exchange's side of the turn memory (rewrite/turn_memory): receive makes
// the turn_reuse every walk of the body that arrived goes through (inspect,
// the offload scan, the prefix check), with the conversation's previous turn
// when one may help: those walks reuse what both turns share and record what
// they learn; at the end of the exchange the body and that record are filed
// (moved, not copied) as the conversation's latest turn. Without one (no turn
// memory, a short body, a token count, bytes kept as sent) the turn_reuse is
// plain: the walks go as they come and nothing is filed.
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"

namespace gistproxy::proxy {
namespace {

// Below this a body is walked whole faster than it is compared, filed and
// evicted: short requests (1 KB chat turns) never touch the turn memory.
constexpr std::size_t min_remembered_body = 16 * 1024;

}  // namespace

void recall_turn(services& svc, request_context& ctx, bool may_help) {
  auto& in = ctx.in;
  const std::string_view body = in.request.body();
  // Bytes kept as sent are never rewritten: no turn to help (rewrite/handling.hpp).
  // A token count is not a turn: it must not stand in for the next one.
  if (!may_help || !svc.turns || in.count_tokens || body.size() < min_remembered_body) {
    ctx.turns.reuse.emplace(*in.endpoint);
    return;
  }
  const auto& reuse = ctx.turns.reuse.emplace(svc.turns->find(in.tenant, *in.endpoint, body), *in.endpoint, body);
  exchange_stats(svc.metrics, in.api).turn_memory_bytes(reuse.same_bytes(), body.size() - reuse.same_bytes());
}

void remember_turn(services& svc, request_context& ctx) {
  auto& reuse = ctx.turns.reuse;
  // The control group's body was swapped for the bytes the client sent: its
  // walks do not describe it.
  if (!svc.turns || !reuse || !reuse->remembers() || !ctx.in.facts) return;
  if (ctx.in.handling.why == rewrite::handling_why::control) return;
  auto turn = reuse->finish(std::move(ctx.in.request.body()), ctx.rw.body ? std::move(*ctx.rw.body) : std::string());
  reuse.reset();
  svc.turns->remember(ctx.in.tenant, ctx.in.conversation.hex(), std::move(turn));
}

}  // namespace gistproxy::proxy
