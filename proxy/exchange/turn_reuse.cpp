// The exchange's side of the turn memory (rewrite/turn_memory): receive finds
// the conversation's previous turn for the body that arrived; every walk of
// that body (inspect, the offload scan, the prefix check) runs inside a
// reuse_scope over the bytes both turns share and records what it learns; at
// the end of the exchange the body and that record are filed (moved, not
// copied) as the conversation's latest turn.
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"

namespace gistproxy::proxy {
namespace {

// Below this a body is walked whole faster than it is compared, filed and
// evicted: short requests (1 KB chat turns) never touch the turn memory.
constexpr std::size_t min_remembered_body = 16 * 1024;

}  // namespace

void recall_turn(services& svc, request_context& ctx) {
  auto& in = ctx.in;
  // receive asks only for bodies it decoded to read (not those whose bytes
  // go as sent: rewrite/handling.hpp). A token count is not a turn: it must
  // not stand in for the next one.
  if (!svc.turns || !in.dialect || in.count_tokens) return;
  const std::string_view body = in.request.body();
  if (body.size() < min_remembered_body) return;
  const auto& reuse = ctx.turns.reuse.emplace(svc.turns->find(in.tenant, *in.dialect, body), *in.dialect, body);
  exchange_stats(svc.metrics, in.api).turn_memory_bytes(reuse.same_bytes(), body.size() - reuse.same_bytes());
}

void remember_turn(services& svc, request_context& ctx) {
  auto& reuse = ctx.turns.reuse;
  // The control group's body was swapped for the bytes the client sent: its
  // walks do not describe it.
  if (!svc.turns || !reuse || !ctx.in.facts || ctx.in.handling.why == rewrite::handling_why::control) return;
  auto turn = reuse->finish(std::move(ctx.in.request.body()), ctx.rw.body ? std::move(*ctx.rw.body) : std::string());
  reuse.reset();
  svc.turns->remember(ctx.in.tenant, ctx.span.trace.hex(), std::move(turn));
}

}  // namespace gistproxy::proxy
