// The exchange's side of the turn memory (rewrite/turn_memory): receive finds
// the conversation's previous turn for the body that arrived; every walk of
// that body (inspect, the offload scan, the prefix check) runs inside a
// reuse_scope over the bytes both turns share and records what it learns; at
// the end of the exchange the body and that record are filed (moved, not
// copied) as the conversation's latest turn.
#include "proxy/exchange/exchange.hpp"

namespace gistproxy::proxy {

void recall_turn(services& svc, request_context& ctx) {
  auto& in = ctx.in;
  // Bodies gistproxy reads (inspect, offload, the prefix check); not those
  // it must forward unread.
  if (!svc.turns || !in.dialect || in.body_encoded || in.controls.bypass || in.aws == aws_auth::client_signed) return;
  const std::string_view body = in.request.body();
  ctx.turns.previous = svc.turns->find(in.tenant, *in.dialect, body);
  ctx.turns.next = std::make_shared<rewrite::remembered_turn>();
  ctx.turns.next->api = in.dialect;
}

void remember_turn(services& svc, request_context& ctx) {
  auto& next = ctx.turns.next;
  if (!svc.turns || !next || !ctx.in.facts) return;
  // Only a turn whose walks completed is a record of the whole body; the
  // control group's body was swapped for the bytes the client sent.
  if (ctx.in.control()) return;
  next->body_walks.finish();
  next->forwarded_walks.finish();
  if (ctx.rw.body) next->forwarded = std::move(*ctx.rw.body);
  next->body = std::move(ctx.in.request.body());
  svc.turns->remember(ctx.in.tenant, ctx.span.trace.hex(), std::move(next));
}

}  // namespace gistproxy::proxy
