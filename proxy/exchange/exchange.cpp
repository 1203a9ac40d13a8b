#include "proxy/exchange/exchange.hpp"

#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/exchange/stored_state.hpp"
#include "proxy/net/request_target.hpp"

namespace gistproxy::proxy {

exchange::exchange(shard& s, client_channel& client, connection_memo& memo)
    : shard_(s), svc_(s.svc()), channel_(client), memo_(memo) {}

awaitable<bool> exchange::run(client_request& request) {
  // Whether the connection is kept after the answer is the transport's to
  // decide (the request's Connection, a drain: client_channel).
  request_context ctx(request, channel_, true, svc_.recorder != nullptr, memo_);
  receive(svc_, ctx);
  // A request that came around to this proxy again is answered at once: each
  // pass would otherwise forward it anew, a connection and descriptors each.
  auto refused = forwarding_loop(svc_, ctx);
  if (!refused) refused = credential_mismatch(ctx);
  // A control header gistproxy cannot honour, or credentials naming no one
  // identity (aws_signing.hpp): said, not guessed.
  if (!refused && !ctx.in.controls.error.empty()) refused = proxy_error{error_kind::bad_request, ctx.in.controls.error};
  if (refused) {
    restore_count(ctx);
    co_await ctx.out.error(*refused);
    finish(svc_, ctx);
    co_return ctx.out.reply().keep_alive;
  }
  std::optional<proxy_error> internal;
  try {
    try {
      co_await rewrite(svc_, ctx);
    } catch (const std::exception&) {
      // The rewrite is an optimisation: if it fails in a way nothing
      // foresaw, the client's bytes go upstream as sent (fail-open), counted.
      ctx.rw.body.reset();
      ctx.rw.intercept_tool.clear();
      exchange_stats(svc_.metrics, ctx.in.api).degraded_mode(degraded::internal);
    }
    restore_count(ctx);
    track_prefix(svc_, ctx);
    co_await forward(svc_, shard_, ctx, channel_);
    remember_stored(svc_, ctx);  // what reads of this turn's stored state must show (stored_state.hpp)
  } catch (const std::exception& ex) {
    // Can't-happen territory (allocation failure, invalid header bytes): answer 500, keep serving.
    internal = proxy_error{error_kind::internal, ex.what()};
  }
  if (internal) {
    ctx.out.reply().keep_alive = false;
    co_await ctx.out.error(*internal);
  }
  finish(svc_, ctx);
  remember_turn(svc_, ctx);  // last: it takes the body
  co_return ctx.out.reply().keep_alive;
}

awaitable<void> exchange::reject(client_request& request, proxy_error e) {
  // Refused before its target was checked: the access log, the span and the
  // record see the target only as target_shown says (no userinfo, no fragment).
  request.target(target_shown(std::string_view(request.target())));
  request_context ctx(request, channel_, false, svc_.recorder != nullptr, memo_);
  receive(svc_, ctx);
  co_await ctx.out.error(e);
  finish(svc_, ctx);
}

}  // namespace gistproxy::proxy
