// Streamed answers of requests that offer read_blob: one client stream, spliced
// from every page-in hop by the dialect's stream filter. Text reaches the client
// as it arrives; read_blob calls never do; the end of the turn is sent once.
#include <boost/asio/write.hpp>

#include "proxy/client_watch.hpp"
#include "proxy/exchange.hpp"
#include "proxy/exchange_detail.hpp"
#include "proxy/hop_by_hop.hpp"
#include "proxy/http_writer.hpp"
#include "proxy/keepalive_ticker.hpp"
#include "rewrite/intercept/stream_filter.hpp"
#include "rewrite/usage_observer.hpp"

namespace gistproxy::proxy {

using detail::is_stale_connection_error;
using detail::timed;
using detail::upstream_failure;

namespace {
// No API sends one SSE event this large; past it the stream is passed through.
constexpr std::size_t max_pending_event = 16u << 20;
}  // namespace

bool exchange::stream_interceptable(const request_context& ctx, const http::response_parser<http::empty_body>& head) const {
  if (ctx.intercept_tool.empty() || !svc_.store || !ctx.dialect) return false;
  if (head.get().result_int() != 200) return false;
  return detail::response_body_kind(head.get()) == rewrite::usage_observer::body_kind::sse && rewrite::make_stream_filter(ctx.dialect->kind(), "") != nullptr;
}

// Feeds one piece of a hop's stream through the filter. An event the filter
// cannot handle (an exception on a shape nobody expected), or an event larger
// than any API sends, switches the stream to pass-through: from that event
// on, the upstream's bytes reach the client as sent (fail-open) and it is
// counted. Never an aborted stream for what we merely did not understand.
std::string exchange::filter_events(request_context& ctx, rewrite::stream_filter& filter,
                                    rewrite::sse::event_parser& events, std::string_view piece, bool& passthrough) {
  std::string to_client;
  events.feed(piece, [&](const rewrite::sse::event& e) {
    if (passthrough) {
      to_client += e.raw;
      return;
    }
    try {
      to_client += filter.on_event(e);
    } catch (const std::exception&) {
      passthrough = true;
      to_client += e.raw;
    }
  });
  if (!passthrough && events.pending().size() > max_pending_event) passthrough = true;
  if (passthrough) {
    to_client += events.pending();
    svc_.metrics.rewrite_failures.labels({ctx.api, "stream_unparsed"}).inc();
  }
  return to_client;
}

awaitable<bool> exchange::write_chunk(request_context& ctx, std::string_view data, bool last) {
  if (data.empty() && (!last || !ctx.chunked_response)) co_return true;
  const bool framed = ctx.chunked_response;
  std::string prefix = data.empty() || !framed ? std::string() : chunk_prefix(data.size());
  std::array<asio::const_buffer, 4> piece{asio::buffer(prefix), asio::buffer(data),
                                          asio::buffer(data.empty() || !framed ? std::string_view() : chunk_suffix),
                                          asio::buffer(last && framed ? last_chunk : std::string_view())};
  client_.expires_after(svc_.cfg.client_timeout);
  auto [ec, n] = co_await asio::async_write(client_, piece, use_nothrow);
  if (ec) {
    ctx.error = proxy_error{error_kind::client_disconnected, "client went away mid-stream"};
    ctx.keep_alive = false;
    co_return false;
  }
  ctx.bytes_out += data.size();
  ctx.capture_response(data);
  co_return true;
}

awaitable<void> exchange::stream_with_page_in(request_context& ctx, upstream_pool& pool, upstream_reply first,
                                              telemetry::span& first_span, client_watch& watch,
                                              const std::string& first_body) {
  const auto& cfg = svc_.cfg;
  auto filter = rewrite::make_stream_filter(ctx.dialect->kind(), ctx.intercept_tool);

  // One client response head for all hops: the first hop's fields, chunked
  // (HTTP/1.0 has no chunked coding: its body ends when we close).
  http::response<http::empty_body> out{first.head->get().result(), ctx.request.version() >= 10 ? ctx.request.version() : 11};
  out.reason(first.head->get().reason());
  copy_end_to_end_fields(first.head->get(), out);
  ctx.chunked_response = ctx.request.version() >= 11;
  if (ctx.chunked_response) out.chunked(true);
  else ctx.keep_alive = false;
  out.keep_alive(ctx.keep_alive);
  const std::string out_head = response_head(out);
  client_.expires_after(cfg.client_timeout);
  ctx.status = 200;
  ctx.response_started = true;
  if (auto [ec, n] = co_await asio::async_write(client_, asio::buffer(out_head), use_nothrow); ec) {
    ctx.error = proxy_error{error_kind::client_disconnected, "client went away before the response headers"};
    ctx.keep_alive = false;
    svc_.tracer.end(first_span);
    co_return;
  }

  upstream_reply reply = std::move(first);
  telemetry::span up_span = std::move(first_span);
  std::string hop_body;
  const std::string* body = &first_body;
  page_in_state paging;
  std::vector<char> buffer(16 * 1024);

  for (int hop = 0;; ++hop) {
    // Relay this hop's events through the filter.
    auto& conn = *reply.conn;
    http::response_parser<http::buffer_body> parser{std::move(*reply.head)};
    rewrite::sse::event_parser events;
    std::optional<proxy_error> broke;
    bool passthrough = false;  // the filter gave up on this stream: bytes go as they come
    while (!parser.is_done()) {
      parser.get().body().data = buffer.data();
      parser.get().body().size = buffer.size();
      conn.tcp().expires_after(cfg.stream_idle_timeout);
      auto [ec, n] = co_await timed(ctx, [&] {
        return conn.with_stream([&](auto& s) { return http::async_read_some(s, conn.buffer, parser, use_nothrow); });
      });
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        broke = upstream_failure(ec, "in the middle of the stream");
        break;
      }
      const std::string_view piece(buffer.data(), buffer.size() - parser.get().body().size);
      std::string to_client = passthrough ? std::string(piece) : filter_events(ctx, *filter, events, piece, passthrough);
      if (!co_await write_chunk(ctx, to_client, false)) break;
    }
    watch.guard(nullptr);
    if (watch.client_gone() || (ctx.error && ctx.error->kind == error_kind::client_disconnected)) {
      up_span.fail("client disconnected");
      svc_.tracer.end(up_span);
      break;  // run() records it; the upstream connection is dropped
    }
    if (broke) {
      up_span.fail(std::string(broke->type()));
      svc_.tracer.end(up_span);
      ctx.error = broke;
      co_await write_chunk(ctx, filter->error_event("api_error", "gistproxy: " + broke->detail), true);
      break;
    }
    end_upstream_span(up_span, 200, {});
    if (parser.keep_alive()) pool.release(std::move(reply.conn));
    if (passthrough) {
      // The upstream's own events, from the one we did not understand on,
      // reached the client as sent, its end included: nothing to add.
      co_await write_chunk(ctx, {}, true);
      break;
    }

    auto end = filter->end_hop();
    if (!end.complete) {
      // The upstream closed the stream before the end of its turn: the client's
      // stream must not end as if it were complete.
      ctx.error = proxy_error{error_kind::upstream_reset, "upstream stream ended before the end of the turn"};
      co_await write_chunk(ctx, filter->error_event("api_error", "gistproxy: " + ctx.error->detail), true);
      break;
    }
    if (end.calls.empty() || hop >= int(cfg.max_page_in_hops)) {
      if (!end.calls.empty()) svc_.metrics.page_ins.labels({ctx.api, "full", "hop_limit"}).inc(end.calls.size());
      co_await write_chunk(ctx, filter->finish(), true);
      break;
    }
    auto results = co_await resolve_calls(ctx, end.calls, paging);
    auto next = ctx.dialect->continue_conversation(*body, end.response, ctx.intercept_tool, results,
                                                   hop + 1 >= int(cfg.max_page_in_hops));
    if (!next) {
      svc_.metrics.rewrite_failures.labels({ctx.api, "page_in_continue"}).inc();
      co_await write_chunk(ctx, filter->finish(), true);
      break;
    }
    ++paging.hops;
    hop_body = std::move(*next);
    body = &hop_body;
    if (!co_await write_chunk(ctx, filter->keepalive(), false)) break;

    // While the next hop waits for its first byte, keep-alive events keep
    // clients with idle timeouts from giving up.
    const std::string ping = filter->keepalive();
    keepalive_ticker ticker(client_, ctx.chunked_response ? chunk_prefix(ping.size()) + ping + std::string(chunk_suffix) : ping,
                            cfg.stream_keepalive);
    ticker.start();
    up_span = start_upstream_span(ctx, pool.target(), hop + 1);
    reply = co_await send_upstream(ctx, pool, *body, up_span, watch);
    co_await ticker.stop();
    if (watch.client_gone()) {
      up_span.fail("client disconnected");
      svc_.tracer.end(up_span);
      break;
    }
    std::optional<proxy_error> failed = reply.failure;
    if (!failed && reply.head->get().result_int() != 200)
      failed = proxy_error{error_kind::upstream_bad_response,
                           "upstream answered a page-in hop with HTTP " + std::to_string(reply.head->get().result_int())};
    if (failed) {
      // Headers are out: the failure becomes the API's own SSE error event.
      up_span.fail(std::string(failed->type()));
      svc_.tracer.end(up_span);
      ctx.error = failed;
      co_await write_chunk(ctx, filter->error_event("api_error", "gistproxy: " + failed->detail), true);
      break;
    }
  }
  ctx.usage = filter->usage();  // summed over hops, as the client was told
  finish_paging(ctx, paging);
}

}  // namespace gistproxy::proxy
