// The forward phase: the first hop upstream, then the reader its answer
// calls for (relay, JSON or SSE), driven by the page-in loop. The loop asks
// `upstream_source` for later hops and for answers to read_blob calls.
#include <optional>

#include "proxy/exchange/blob_pager.hpp"
#include "proxy/exchange/h2_upstream_hop.hpp"
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/page_in_loop.hpp"
#include "proxy/exchange/socket_hop.hpp"
#include "proxy/exchange/stored_state.hpp"
#include "proxy/net/client_watch.hpp"
#include "proxy/net/keepalive_ticker.hpp"
#include "rewrite/cost/ledger.hpp"

namespace gistproxy::proxy {
namespace {

// Where a hop goes: on the transport's own upstream socket when it holds one,
// over HTTP/2 when the client's signature covers HTTP/2 pseudo-headers
// (`h2`: the request's, then), else through the pool.
std::unique_ptr<outgoing_hop> make_hop(services& svc, upstream_pool* pool, upstream_socket* leg, request_context& ctx,
                                       client_watch& watch, const h2_pseudo_fields* h2, int hop) {
  if (leg) return std::make_unique<socket_hop>(svc, ctx, *leg, hop);
  if (h2) return std::make_unique<h2_upstream_hop>(svc, *pool, ctx, watch, *h2, hop);
  return std::make_unique<upstream_hop>(svc, *pool, ctx, watch, hop);
}

class upstream_source final : public hop_source {
 public:
  upstream_source(services& svc, upstream_pool* pool, upstream_socket* leg, request_context& ctx,
                  client_watch& watch, client_channel& client, const h2_pseudo_fields* h2)
      : svc_(svc), pool_(pool), leg_(leg), ctx_(ctx), watch_(watch), client_(client), h2_(h2), pager_(svc, ctx) {}

  awaitable<sent> send(const std::string& body, int hop, std::string keepalive) override {
    std::optional<keepalive_ticker> ticker;
    if (!keepalive.empty()) {
      // While the next hop waits for its first byte, keep-alive events keep
      // clients with idle timeouts from giving up.
      ticker.emplace(client_, keepalive, svc_.cfg.stream_keepalive);
      ticker->start();
    }
    auto answer = make_hop(svc_, pool_, leg_, ctx_, watch_, h2_, hop);
    auto failure = co_await answer->send(body);
    if (ticker) {
      co_await ticker->stop();
      ctx_.out.sent_elsewhere(keepalive, ticker->sent());  // its bytes reached the client too
    }
    if (failure) {
      answer->fail(failure->type());
      co_return sent{nullptr, failure};
    }
    co_return sent{std::move(answer), std::nullopt};
  }

  awaitable<std::vector<rewrite::call_result>> resolve(const std::vector<rewrite::blob_call>& calls) override {
    co_return co_await pager_.answer(calls);
  }

  awaitable<std::optional<std::string>> turn_with_rereads_inline() override {
    // A Responses WebSocket's hops are messages on the client's own leg.
    if (!pager_.take_joined_inline() || leg_) co_return std::nullopt;
    co_return co_await proxy::turn_with_rereads_inline(svc_, ctx_);
  }

 private:
  services& svc_;
  upstream_pool* pool_;
  upstream_socket* leg_;
  request_context& ctx_;
  client_watch& watch_;
  client_channel& client_;
  const h2_pseudo_fields* h2_;
  blob_pager pager_;
};

// Which reader the first hop's answer calls for.
std::unique_ptr<hop_reader> reader_for(services& svc, request_context& ctx, const upstream_answer& first,
                                       reader_env env) {
  if (ctx.stored.read) return make_stored_reader(svc, ctx, first, std::move(env));
  if (!intercepts_answers(svc, ctx) || first.status() != 200) return make_relay_reader(std::move(env));
  switch (body_kind_of(first.head())) {
    case rewrite::usage_observer::body_kind::json: return make_json_reader(std::move(env));
    case rewrite::usage_observer::body_kind::sse:
    case rewrite::usage_observer::body_kind::eventstream: {
      // The framing the wire format declares, and only that: a stream in another
      // framing is relayed as sent.
      const auto transport = ctx.in.endpoint->wire().answer_stream_transport();
      const bool sse = body_kind_of(first.head()) == rewrite::usage_observer::body_kind::sse;
      if (sse != (transport == rewrite::stream_transport::sse)) break;
      // One filter, made once: null where the wire format cannot splice streams (relayed as sent).
      if (auto filter = ctx.in.endpoint->wire().make_stream_filter(ctx.rw.intercept_tool)) {
        filter->echo(env.echoed);
        return make_stream_reader(std::move(env), std::move(filter), transport);
      }
      break;
    }
    case rewrite::usage_observer::body_kind::other: break;
  }
  return make_relay_reader(std::move(env));
}

}  // namespace

std::optional<proxy_error> forwarding_loop(const services& svc, const request_context& ctx) {
  if (!svc.via.seen_in(ctx.in.request)) return std::nullopt;
  return proxy_error{error_kind::loop_detected,
                     "this request came back to the gistproxy that forwarded it (its Via names this proxy): the "
                     "upstream URL of the " + std::string(ctx.in.family) +
                         " APIs leads back into gistproxy itself; not forwarded again"};
}

awaitable<void> forward(services& svc, shard& sh, request_context& ctx, client_channel& client) {
  auto* leg = client.upstream_leg();
  auto* pool = leg ? nullptr : sh.pool_for(ctx.in.family);
  exchange_stats stats(svc.metrics, ctx.in.api);
  if (!leg && !pool) {
    const proxy_error missing{error_kind::upstream_not_configured,
                              "no upstream for the " + std::string(ctx.in.family) + " APIs: start gistproxy with --" +
                                  std::string(ctx.in.family) + "-upstream URL (or --upstream)"};
    co_await ctx.out.error(missing);
    co_return;
  }
  client_watch watch;
  client.watch(watch);
  const std::string& body = ctx.forwarded_body();

  // A signature over HTTP/2 pseudo-headers verifies only over HTTP/2.
  const auto* h2 = !leg && needs_h2_upstream(ctx, client.pseudo_fields()) ? client.pseudo_fields() : nullptr;
  // The first hop lives in this frame (no allocation on the common path);
  // later hops come from upstream_source.
  std::optional<upstream_hop> pooled;
  std::optional<socket_hop> socketed;
  std::optional<h2_upstream_hop> multiplexed;
  outgoing_hop& first = leg  ? static_cast<outgoing_hop&>(socketed.emplace(svc, ctx, *leg, 0))
                        : h2 ? static_cast<outgoing_hop&>(multiplexed.emplace(svc, *pool, ctx, watch, *h2, 0))
                             : static_cast<outgoing_hop&>(pooled.emplace(svc, *pool, ctx, watch, 0));
  if (auto failure = co_await first.send(body)) {
    first.fail(failure->type());
    co_await ctx.out.error(*failure);
  } else {
    upstream_source source(svc, pool, leg, ctx, watch, client, h2);
    reader_env env{ctx.out, stats, ctx.in.endpoint ? &ctx.in.endpoint->wire() : nullptr, ctx.rw.intercept_tool};
    // Only a rewritten body differs from what the client sent in what it echoes.
    if (ctx.rw.body && ctx.offers_read_blob())
      env.echoed = ctx.in.endpoint->wire().echoed_members(ctx.in.request.body(), ctx.in.top);
    // The previous_response_id the client sent, where the request names the turn's kept id.
    if (!ctx.stored.previous_sent.empty()) env.echoed["previous_response_id"] = ctx.stored.previous_sent;
    ctx.stored.streamed = body_kind_of(first.head()) != rewrite::usage_observer::body_kind::json;
    auto reader = reader_for(svc, ctx, first, std::move(env));
    const page_in_plan plan{env.wire, ctx.rw.intercept_tool, int(svc.cfg.max_page_in_hops)};
    // Each hop's own usage: a JSON answer's, else the growth of the reader's
    // sum over hops (a stream's last hop may still be arriving: after the loop).
    rewrite::token_usage before;
    bool last_pending = false;
    const auto noted = [&](const hop_read& got, bool continued) {
      note_hop(ctx, got, continued);
      auto& hops = ctx.upstream.hop_usage;
      if (got.usage) {
        hops.push_back(*got.usage);
      } else if (continued) {
        hops.push_back(rewrite::usage_between(before, reader->usage()));
        before = reader->usage();  // the next hop's growth starts here
      } else {
        last_pending = true;
      }
    };
    ctx.upstream.hops = co_await run_page_in_loop(source, *reader, first, body, plan, stats, noted);
    ctx.upstream.usage = reader->usage();
    // A relayed answer (a request gistproxy leaves as sent, the control
    // group) is read in one go: its usage is the whole sum. It is in the
    // ledger too, without = with. Reads of stored state are not LLM calls.
    if (last_pending) ctx.upstream.hop_usage.push_back(rewrite::usage_between(before, ctx.upstream.usage));
    else if (ctx.upstream.hop_usage.empty() && !ctx.stored.read)
      ctx.upstream.hop_usage.push_back(rewrite::usage_between({}, ctx.upstream.usage));
  }
  if (ctx.offers_read_blob()) stats.page_in_hops(ctx.upstream.hops);
  ctx.span.set("gistproxy.page_in_hops", std::int64_t(ctx.upstream.hops));
  if (watch.client_gone()) {
    ctx.out.reply().error = proxy_error{error_kind::client_disconnected, "client closed the connection; upstream request cancelled"};
    ctx.out.reply().keep_alive = false;
  }
}

}  // namespace gistproxy::proxy
