#include "proxy/exchange.hpp"
#include "proxy/exchange_detail.hpp"

#include <boost/asio/write.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>

#include "proxy/client_watch.hpp"
#include "proxy/hop_by_hop.hpp"
#include "proxy/http_writer.hpp"
#include "proxy/recorder.hpp"
#include "rewrite/usage_observer.hpp"

namespace gistproxy::proxy {

using detail::is_stale_connection_error;
using detail::response_body_kind;
using detail::timed;
using detail::upstream_failure;
namespace {

using steady = std::chrono::steady_clock;

// Bodies up to this size with a Content-Length (and not SSE) are read whole
// and written in one go; anything else streams through a small buffer.
constexpr std::size_t small_body_limit = 256 * 1024;
constexpr std::size_t relay_buffer_size = 16 * 1024;

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// RFC 9110 §9.2.2.
bool idempotent(http::verb v) {
  return v == http::verb::get || v == http::verb::head || v == http::verb::options || v == http::verb::put ||
         v == http::verb::delete_ || v == http::verb::trace;
}

}  // namespace

// ---- receive ---------------------------------------------------------------

void exchange::receive(request_context& ctx) {
  auto& req = ctx.request;
  ctx.bytes_in = req.body().size();
  ctx.keep_alive = req.keep_alive() && !svc_.draining;
  if (svc_.recorder) ctx.recorded_response.emplace();
  ctx.dialect = rewrite::dialect_for(std::string_view(req.method_string()), std::string_view(req.target()));
  if (ctx.dialect) {
    ctx.api = ctx.dialect->name();
    if (decode_body(ctx)) ctx.facts = ctx.dialect->inspect(req.body());
  }

  // Trace identity: the client's traceparent wins; else the conversation's
  // opening names the trace, so every turn of it shares one trace id.
  if (auto it = req.find("traceparent"); it != req.end())
    ctx.client_parent = telemetry::parse_traceparent(std::string_view(it->value()));
  telemetry::trace_id trace;
  telemetry::span_id parent;
  if (ctx.client_parent) {
    trace = ctx.client_parent->trace;
    parent = ctx.client_parent->parent;
  } else if (ctx.facts) {
    trace = telemetry::derive_trace_id(ctx.facts->conversation_key);
  } else {
    trace = svc_.tracer.new_trace_id();
  }

  auto& s = ctx.span = svc_.tracer.start("gistproxy.request", telemetry::span_kind::server, trace, parent);
  auto target = std::string_view(req.target());
  s.set("http.request.method", std::string(req.method_string()));
  s.set("url.path", std::string(target.substr(0, target.find('?'))));
  s.set("gistproxy.api", std::string(ctx.api));
  s.set("http.request.body.size", std::int64_t(ctx.bytes_in));
  if (ctx.dialect) {
    s.set("gen_ai.operation.name", std::string(ctx.dialect->operation_name()));
    s.set("gen_ai.provider.name", std::string(ctx.dialect->provider_name()));
    s.set("gistproxy.body_parsed", ctx.facts.has_value());
  }
  if (ctx.facts) {
    s.set("gen_ai.request.model", ctx.facts->model);
    s.set("gistproxy.stream", ctx.facts->stream);
    s.set("gen_ai.conversation.id", trace.hex());
  }
}

// ---- forward ---------------------------------------------------------------

telemetry::span exchange::start_upstream_span(request_context& ctx, const http_url& target, int hop) {
  auto up_span = svc_.tracer.start("upstream", telemetry::span_kind::client, ctx.span.trace, ctx.span.id);
  if (ctx.dialect) {
    up_span.name = std::string(ctx.dialect->operation_name()) + (ctx.facts ? " " + ctx.facts->model : "");
    up_span.set("gen_ai.operation.name", std::string(ctx.dialect->operation_name()));
    up_span.set("gen_ai.provider.name", std::string(ctx.dialect->provider_name()));
  }
  if (ctx.facts) up_span.set("gen_ai.request.model", ctx.facts->model);
  up_span.set("server.address", target.host);
  up_span.set("server.port", std::int64_t(std::stoi(target.port)));
  up_span.set("gistproxy.hop", std::int64_t(hop + 1));
  return up_span;
}

awaitable<exchange::upstream_reply> exchange::send_upstream(request_context& ctx, upstream_pool& pool,
                                                             const std::string& body, telemetry::span& up_span,
                                                             client_watch& watch) {
  const auto& cfg = svc_.cfg;
  http::request<http::empty_body> up{ctx.request.method(), pool.target().join(std::string_view(ctx.request.target())), 11};
  copy_end_to_end_fields(ctx.request, up);
  up.set(http::field::host, pool.target().host_header());
  if (!body.empty() || ctx.request.method() == http::verb::post || ctx.request.method() == http::verb::put ||
      ctx.request.method() == http::verb::patch)
    up.content_length(body.size());
  if (ctx.client_parent)
    up.set("traceparent", telemetry::format_traceparent(up_span.trace, up_span.id, ctx.client_parent->flags));
  const std::string head = request_head(up);

  upstream_reply reply;
  // A pooled connection the upstream closed while idle fails before any
  // response byte: the request was never processed, so it is retried once on
  // a fresh connection.
  for (int attempt = 0; attempt < 2 && !watch.client_gone(); ++attempt) {
    auto lease = co_await timed(ctx, [&] { return pool.acquire(attempt > 0); });
    if (lease.error) {
      reply.failure = lease.error;
      break;
    }
    reply.conn = std::move(lease.connection);
    watch.guard(reply.conn.get());
    up_span.set("gistproxy.connection_reused", reply.conn->reused);
    auto& conn = *reply.conn;
    conn.tcp().expires_after(cfg.upstream_timeout);
    std::array<asio::const_buffer, 2> request_bytes{asio::buffer(head), asio::buffer(body)};
    auto [wec, wn] = co_await timed(ctx, [&] {
      return conn.with_stream([&](auto& s) { return asio::async_write(s, request_bytes, use_nothrow); });
    });
    error_code rec = wec;
    if (!wec) {
      // Skip interim 1xx responses (we never send Expect, but an upstream may still).
      do {
        reply.head = std::make_unique<http::response_parser<http::empty_body>>();
        reply.head->body_limit(boost::none);
        reply.head->header_limit(64 * 1024);
        if (ctx.request.method() == http::verb::head) reply.head->skip(true);
        auto [ec, n] = co_await timed(ctx, [&] {
          return conn.with_stream([&](auto& s) { return http::async_read_header(s, conn.buffer, *reply.head, use_nothrow); });
        });
        rec = ec;
      } while (!rec && reply.head->get().result_int() / 100 == 1 && reply.head->get().result_int() != 101);
    }
    if (!rec) {
      reply.failure.reset();
      break;
    }
    // A request that failed while being written cannot have been processed
    // (the upstream never had its whole body). One that was written whole
    // may have been, even if the connection then closed without an answer:
    // retrying a POST then could bill the call twice, so only idempotent
    // methods are retried past that point.
    const bool complete_request_sent = !wec;
    bool retry = conn.reused && attempt == 0 && is_stale_connection_error(rec) &&
                 (!complete_request_sent || idempotent(ctx.request.method()));
    reply.failure = upstream_failure(rec, wec ? "while receiving the request" : "before sending response headers");
    watch.guard(nullptr);
    reply.conn.reset();
    if (!retry) break;
    svc_.metrics.upstream_connections.labels({"retried"}).inc();
  }
  co_return reply;
}

void exchange::end_upstream_span(telemetry::span& up_span, int status, const rewrite::token_usage& usage) {
  up_span.set("http.response.status_code", std::int64_t(status));
  if (usage.input_tokens >= 0) up_span.set("gen_ai.usage.input_tokens", usage.input_tokens);
  if (usage.output_tokens >= 0) up_span.set("gen_ai.usage.output_tokens", usage.output_tokens);
  if (status >= 500) up_span.fail("upstream status " + std::to_string(status));
  svc_.tracer.end(up_span);
}

awaitable<void> exchange::forward(request_context& ctx, client_watch& watch) {
  auto& pool = shard_.pool_for(ctx.dialect);
  std::string hop_body;  // the request body of hops after the first
  const std::string* body = ctx.rewritten_body ? &*ctx.rewritten_body : &ctx.request.body();
  page_in_state paging;

  for (int hop = 0;; ++hop) {
    auto up_span = start_upstream_span(ctx, pool.target(), hop);
    auto reply = co_await send_upstream(ctx, pool, *body, up_span, watch);
    if (watch.client_gone()) {
      up_span.fail("client disconnected");
      svc_.tracer.end(up_span);
      co_return;  // run() records the disconnect
    }
    if (reply.failure) {
      up_span.fail(std::string(reply.failure->type()));
      up_span.set("error.type", std::string(reply.failure->type()));
      svc_.tracer.end(up_span);
      co_await respond_error(ctx, *reply.failure);
      co_return;
    }
    const int status = int(reply.head->get().result_int());
    bool reusable = false;
    if (hop == 0 && stream_interceptable(ctx, *reply.head)) {
      co_await stream_with_page_in(ctx, pool, std::move(reply), up_span, watch, *body);
      co_return;
    }
    if (!interceptable(ctx, *reply.head)) {
      co_await respond(ctx, *reply.conn, *reply.head, up_span, reusable);
      watch.guard(nullptr);
      end_upstream_span(up_span, status, ctx.usage);
      if (reusable && !watch.client_gone()) pool.release(std::move(reply.conn));
      finish_paging(ctx, paging);
      co_return;
    }

    // A JSON answer of a request that offers read_blob: read it whole and
    // resolve the model's read_blob calls before anything reaches the client.
    auto whole = co_await read_whole_body(ctx, *reply.conn, *reply.head, up_span, reusable);
    watch.guard(nullptr);
    if (!whole) {
      end_upstream_span(up_span, status, ctx.usage);
      finish_paging(ctx, paging);
      co_return;  // read_whole_body answered the client
    }
    if (reusable) pool.release(std::move(reply.conn));
    std::optional<std::string> next;
    try {
      next = co_await page_in_hop(ctx, *whole, *body, hop, paging);
    } catch (const std::exception&) {
      // An answer of a shape nothing expected: it goes to the client as the
      // upstream sent it (fail-open), counted, never a 500 of ours.
      svc_.metrics.rewrite_failures.labels({ctx.api, "answer_unparsed"}).inc();
      paging.final_body.reset();
      next.reset();
    }
    end_upstream_span(up_span, status, paging.hop_usage);
    if (!next) {
      finish_paging(ctx, paging);
      co_await write_whole_response(ctx, whole->get(), paging.final_body ? *paging.final_body : whole->get().body());
      co_return;
    }
    hop_body = std::move(*next);
    body = &hop_body;
  }
}

// ---- respond ---------------------------------------------------------------

awaitable<std::unique_ptr<http::response_parser<http::string_body>>> exchange::read_whole_body(
    request_context& ctx, upstream_connection& conn, http::response_parser<http::empty_body>& head,
    telemetry::span& up_span, bool& reusable) {
  auto whole = std::make_unique<http::response_parser<http::string_body>>(std::move(head));
  conn.tcp().expires_after(svc_.cfg.stream_idle_timeout);
  if (!whole->is_done()) {
    auto [ec, n] = co_await timed(ctx, [&] {
      return conn.with_stream([&](auto& s) { return http::async_read(s, conn.buffer, *whole, use_nothrow); });
    });
    if (ec) {
      auto e = upstream_failure(ec, "while sending the response body");
      up_span.fail(std::string(e.type()));
      co_await respond_error(ctx, e);
      co_return nullptr;
    }
  }
  reusable = whole->keep_alive() && whole->is_done();
  co_return whole;
}

awaitable<void> exchange::write_whole_response(request_context& ctx, const http::response<http::string_body>& from,
                                               const std::string& body) {
  const bool head_request = ctx.request.method() == http::verb::head;
  http::response<http::empty_body> out{from.result(), ctx.request.version() >= 10 ? ctx.request.version() : 11};
  out.reason(from.reason());
  copy_end_to_end_fields(from, out);
  const unsigned status = from.result_int();
  if (head_request) {
    if (auto it = from.find(http::field::content_length); it != from.end()) out.set(http::field::content_length, it->value());
  } else if (status != 204 && status != 304) {
    out.content_length(body.size());
  }
  out.keep_alive(ctx.keep_alive);
  const std::string out_head = response_head(out);
  client_.expires_after(svc_.cfg.client_timeout);
  ctx.status = int(status);
  ctx.response_started = true;
  std::array<asio::const_buffer, 2> bytes{asio::buffer(out_head), asio::buffer(head_request ? std::string_view() : std::string_view(body))};
  auto [wec, wn] = co_await asio::async_write(client_, bytes, use_nothrow);
  if (wec) {
    ctx.error = proxy_error{error_kind::client_disconnected, "client went away while receiving the response"};
    ctx.keep_alive = false;
    co_return;
  }
  ctx.bytes_out = head_request ? 0 : body.size();
  if (!head_request) ctx.capture_response(body);
}

awaitable<void> exchange::respond(request_context& ctx, upstream_connection& conn,
                                  http::response_parser<http::empty_body>& head, telemetry::span& up_span,
                                  bool& reusable) {
  const auto& cfg = svc_.cfg;
  const auto& h = head.get();
  const bool head_request = ctx.request.method() == http::verb::head;
  const unsigned status = h.result_int();
  const bool has_body = !head_request && status != 204 && status != 304;
  auto body_kind = response_body_kind(h);
  rewrite::usage_observer observer(ctx.dialect, body_kind);
  ctx.status = int(status);

  auto length = head.content_length();
  const bool small = has_body && length && *length <= small_body_limit &&
                     body_kind != rewrite::usage_observer::body_kind::sse;

  if (small || !has_body) {
    // Read the whole (small) body, then answer with one write.
    auto whole = co_await read_whole_body(ctx, conn, head, up_span, reusable);
    if (!whole) co_return;
    observer.on_whole_body(whole->get().body());
    co_await write_whole_response(ctx, whole->get(), whole->get().body());
    ctx.usage = observer.finish();
    co_return;
  }

  // Streaming: headers first, then each piece as it arrives (SSE event by event).
  http::response<http::empty_body> out{h.result(), ctx.request.version() >= 10 ? ctx.request.version() : 11};
  out.reason(h.reason());
  copy_end_to_end_fields(h, out);
  http::response_parser<http::buffer_body> body{std::move(head)};
  bool chunked = false;
  if (length) out.content_length(*length);
  else if (ctx.request.version() >= 11) chunked = true, out.chunked(true);
  else ctx.keep_alive = false;  // HTTP/1.0 client: the body ends when we close
  out.keep_alive(ctx.keep_alive);
  const std::string out_head = response_head(out);

  client_.expires_after(cfg.client_timeout);
  ctx.response_started = true;
  if (auto [ec, n] = co_await asio::async_write(client_, asio::buffer(out_head), use_nothrow); ec) {
    ctx.error = proxy_error{error_kind::client_disconnected, "client went away before the response headers"};
    ctx.keep_alive = false;
    co_return;
  }

  std::vector<char> buffer(relay_buffer_size);
  while (!body.is_done()) {
    body.get().body().data = buffer.data();
    body.get().body().size = buffer.size();
    conn.tcp().expires_after(cfg.stream_idle_timeout);
    auto [ec, n] = co_await timed(ctx, [&] {
      return conn.with_stream([&](auto& s) { return http::async_read_some(s, conn.buffer, body, use_nothrow); });
    });
    if (ec == http::error::need_buffer) ec = {};
    if (ec) {
      // The upstream broke mid-response. End the client's response abnormally
      // (no final chunk, short Content-Length) so its SDK raises.
      auto e = upstream_failure(ec, "in the middle of the response");
      up_span.fail(std::string(e.type()));
      ctx.error = e;
      ctx.keep_alive = false;
      co_return;
    }
    std::size_t got = buffer.size() - body.get().body().size;
    std::string prefix = chunked && got ? chunk_prefix(got) : std::string();
    std::array<asio::const_buffer, 4> piece{
        asio::buffer(prefix), asio::buffer(buffer.data(), got),
        asio::buffer(chunked && got ? chunk_suffix : std::string_view()),
        asio::buffer(chunked && body.is_done() ? last_chunk : std::string_view())};
    if (asio::buffer_size(piece) == 0) continue;
    observer.on_body(std::string_view(buffer.data(), got));
    client_.expires_after(cfg.client_timeout);
    auto [wec, wn] = co_await asio::async_write(client_, piece, use_nothrow);
    if (wec) {
      ctx.error = proxy_error{error_kind::client_disconnected, "client went away mid-response"};
      ctx.keep_alive = false;
      co_return;
    }
    ctx.bytes_out += got;
    ctx.capture_response(std::string_view(buffer.data(), got));
  }
  ctx.usage = observer.finish();
  reusable = body.keep_alive();
}

// ---- errors ----------------------------------------------------------------

awaitable<void> exchange::respond_error(request_context& ctx, proxy_error e) {
  ctx.error = e;
  ctx.status = e.status();
  if (ctx.response_started) {
    ctx.keep_alive = false;  // headers are out: only an abnormal end can signal it
    co_return;
  }
  const unsigned version = ctx.request.version() >= 10 ? ctx.request.version() : 11;
  http::response<http::string_body> res{http::status(e.status()), version};
  res.set(http::field::content_type, "application/json");
  res.set("x-gistproxy-error", std::string(e.type()));
  if (e.retryable()) res.set(http::field::retry_after, "1");
  res.body() = e.json_body();
  res.prepare_payload();
  res.keep_alive(ctx.keep_alive);
  ctx.response_started = true;
  client_.expires_after(svc_.cfg.client_timeout);
  auto [ec, n] = co_await http::async_write(client_, res, use_nothrow);
  if (ec) ctx.keep_alive = false;
  ctx.bytes_out = res.body().size();
  ctx.capture_response(res.body());
}

awaitable<void> exchange::reject(client_request& request, proxy_error e) {
  request_context ctx(request);
  ctx.keep_alive = false;
  receive(ctx);
  ctx.keep_alive = false;
  co_await respond_error(ctx, e);
  finish(ctx);
}

// ---- run and finish ----------------------------------------------------------

awaitable<bool> exchange::run(client_request& request) {
  request_context ctx(request);
  receive(ctx);
  std::optional<proxy_error> internal;
  try {
    try {
      co_await rewrite(ctx);
    } catch (const std::exception&) {
      // The rewrite is an optimisation: if it fails in a way nothing
      // foresaw, the client's bytes go upstream as sent (fail-open), counted.
      ctx.rewritten_body.reset();
      ctx.intercept_tool.clear();
      svc_.metrics.rewrite_failures.labels({ctx.api, "internal"}).inc();
    }
    client_watch watch(client_.socket());
    co_await forward(ctx, watch);
    if (watch.client_gone()) {
      ctx.error = proxy_error{error_kind::client_disconnected, "client closed the connection; upstream request cancelled"};
      ctx.keep_alive = false;
    }
  } catch (const std::exception& ex) {
    // Can't-happen territory (allocation failure, invalid header bytes): answer 500, keep serving.
    internal = proxy_error{error_kind::internal, ex.what()};
  }
  if (internal) {
    ctx.keep_alive = false;
    co_await respond_error(ctx, *internal);
  }
  finish(ctx);
  co_return ctx.keep_alive;
}

void exchange::record_exchange(request_context& ctx, int status, const std::string& trace_hex,
                               std::chrono::nanoseconds total) {
  exchange_record r;
  r.unix_ms = svc_.tracer.now() / 1'000'000;
  r.api = std::string(ctx.api);
  r.method = std::string(ctx.request.method_string());
  auto target = std::string_view(ctx.request.target());
  r.path = std::string(target.substr(0, target.find('?')));
  r.trace_id = trace_hex;
  r.status = status;
  r.hops = ctx.hops;
  r.duration_ms = seconds(total) * 1e3;
  r.upstream_ms = seconds(ctx.upstream_wait) * 1e3;
  // The exchange is over: its bodies move to the recorder instead of being copied.
  r.request_body = std::move(ctx.request.body());
  if (ctx.rewritten_body) r.forwarded_body = std::move(*ctx.rewritten_body);
  r.response_body = std::move(*ctx.recorded_response);
  r.response_truncated = ctx.recorded_truncated;
  svc_.recorder->submit(std::move(r));
}

void exchange::finish(request_context& ctx) {
  auto total = steady::now() - ctx.started;
  int status = ctx.error && ctx.error->kind == error_kind::client_disconnected ? 499 : ctx.status;
  auto& m = svc_.metrics;
  auto status_text = std::to_string(status);
  m.requests.labels({ctx.api, status_text}).inc();
  m.request_duration.labels({ctx.api}).observe(seconds(total));
  m.upstream_duration.labels({ctx.api}).observe(seconds(ctx.upstream_wait));
  m.proxy_overhead.labels({ctx.api}).observe(seconds(std::max(total - ctx.upstream_wait, std::chrono::nanoseconds(0))));
  m.request_bytes.labels({ctx.api}).inc(ctx.bytes_in);
  m.response_bytes.labels({ctx.api}).inc(ctx.bytes_out);
  if (ctx.error) m.errors.labels({source_name(ctx.error->source()), ctx.error->type()}).inc();
  if (ctx.usage.input_tokens > 0) m.input_tokens.labels({ctx.api}).inc(std::uint64_t(ctx.usage.input_tokens));
  if (ctx.usage.output_tokens > 0) m.output_tokens.labels({ctx.api}).inc(std::uint64_t(ctx.usage.output_tokens));

  auto& s = ctx.span;
  s.set("http.response.status_code", std::int64_t(status));
  s.set("http.response.body.size", std::int64_t(ctx.bytes_out));
  if (ctx.usage.input_tokens >= 0) s.set("gen_ai.usage.input_tokens", ctx.usage.input_tokens);
  if (ctx.usage.output_tokens >= 0) s.set("gen_ai.usage.output_tokens", ctx.usage.output_tokens);
  if (ctx.error) {
    s.set("error.type", std::string(ctx.error->type()));
    s.set("gistproxy.error.source", std::string(source_name(ctx.error->source())));
    s.fail(ctx.error->detail);
  } else if (status >= 500) {
    s.fail("upstream status " + status_text);
  }
  const std::string trace_hex = s.trace.hex();
  svc_.tracer.end(s);

  if (svc_.log.enabled(telemetry::log_level::info)) {
    telemetry::access_record r;
    r.method = std::string(ctx.request.method_string());
    auto target = std::string_view(ctx.request.target());
    r.path = std::string(target.substr(0, target.find('?')));
    r.api = std::string(ctx.api);
    if (ctx.facts) r.model = ctx.facts->model;
    r.status = status;
    r.duration_ms = seconds(total) * 1e3;
    r.upstream_ms = seconds(ctx.upstream_wait) * 1e3;
    r.bytes_in = ctx.bytes_in;
    r.bytes_out = ctx.bytes_out;
    r.trace_id = trace_hex;
    if (ctx.error) {
      r.error_source = std::string(source_name(ctx.error->source()));
      r.error_type = std::string(ctx.error->type());
    }
    svc_.log.access(r);
  }
  if (svc_.recorder) record_exchange(ctx, status, trace_hex, total);  // last: it takes the bodies
}

}  // namespace gistproxy::proxy
