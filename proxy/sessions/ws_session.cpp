#include "proxy/sessions/ws_session.hpp"

#include <functional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/beast/websocket.hpp>

#include "proxy/exchange/phases.hpp"
#include "proxy/net/hop_by_hop.hpp"
#include "proxy/net/lingering_close.hpp"
#include "proxy/net/socket_mailbox.hpp"
#include "proxy/net/tls_stream.hpp"
#include "proxy/net/upstream_socket.hpp"
#include "proxy/sessions/request_dispatch.hpp"
#include "proxy/sessions/ws_channel.hpp"
#include "rewrite/dialects/responses/responses_socket.hpp"

namespace gistproxy::proxy {
namespace {

// A WebSocket's own fields, which each leg's handshake writes for itself.
bool socket_field(std::string_view name) {
  return beast::iequals(name.substr(0, std::min<std::size_t>(name.size(), 14)), "sec-websocket-") ||
         beast::iequals(name, "content-length") || beast::iequals(name, "date") || beast::iequals(name, "server");
}

// The client's end-to-end fields, for the upstream's handshake and each message's request.
http::fields end_to_end_of(const http::request_header<>& upgrade) {
  http::fields out;
  for_each_end_to_end_field(upgrade, [&](const auto& f) {
    if (!socket_field(f.name_string())) out.insert(f.name_string(), f.value());
  });
  return out;
}

// The HTTP Responses request a response.create message carries: POST on the
// upgrade's target, with the client's end-to-end fields and Host.
client_request request_of(const http::request_header<>& upgrade, const http::fields& fields, std::string body) {
  client_request r{http::verb::post, upgrade.target(), 11};
  for (const auto& f : fields) r.insert(f.name_string(), f.value());
  if (auto host = upgrade.find(http::field::host); host != upgrade.end()) r.set(http::field::host, host->value());
  r.set(http::field::content_type, "application/json");
  r.body() = std::move(body);
  r.prepare_payload();
  return r;
}

// The upstream's refusal (or gistproxy's, when no upstream answered), as an
// HTTP answer on the client's connection, which then closes.
template <class Stream>
awaitable<void> refuse_upgrade(Stream& stream, int status, const http::fields& fields, std::string body) {
  http::response<http::string_body> answer{http::status(status), 11};
  for_each_end_to_end_field(fields, [&](const auto& f) {
    if (!socket_field(f.name_string())) answer.insert(f.name_string(), f.value());
  });
  answer.set(http::field::connection, "close");
  answer.body() = std::move(body);
  answer.prepare_payload();
  co_await http::async_write(stream, answer, use_nothrow);
}

template <class Stream>
class socket_ws_channel final : public ws_channel {
 public:
  socket_ws_channel(websocket::stream<Stream&>& ws, tcp_socket& socket, upstream_socket& leg, std::size_t max)
      : ws_channel(&leg, max), ws_(ws), socket_(socket) {}
  // The client's departure shows as a failed write (its socket is read between messages only).
  void watch(client_watch&) override {}
  executor get_executor() override { return socket_.get_executor(); }

 private:
  awaitable<error_code> send_text(std::string_view text) override {
    ws_.text(true);
    auto [ec, n] = co_await ws_.async_write(asio::buffer(text), use_nothrow);
    co_return ec;
  }
  websocket::stream<Stream&>& ws_;
  tcp_socket& socket_;
};

std::string_view kind_name(rewrite::client_frame_kind kind) {
  switch (kind) {
    case rewrite::client_frame_kind::create: return "create";
    case rewrite::client_frame_kind::other: return "other";
    case rewrite::client_frame_kind::refused: return "refused";
  }
  return "refused";
}

// The close-code label: the codes this transport sends or meets, others as "other".
std::string_view code_name(websocket::close_code code) {
  switch (code) {
    case websocket::close_code::normal: return "normal";
    case websocket::close_code::going_away: return "going_away";
    case websocket::close_code::unknown_data: return "unsupported";
    case websocket::close_code::too_big: return "too_big";
    case websocket::close_code::internal_error: return "internal";
    case websocket::close_code::none: return "gone";
    default: return "other";
  }
}

// Who ended the client's socket and how, counted once when it ends.
struct socket_end {
  std::string_view side = "gistproxy";
  websocket::close_code code = websocket::close_code::normal;
};

// What a failed read of the client's socket says about its end.
socket_end client_read_end(const error_code& ec, websocket::close_code client_code) {
  if (ec == websocket::error::closed) return {"client", client_code};
  if (ec == websocket::error::message_too_big || ec == websocket::error::buffer_overflow)
    return {"gistproxy", websocket::close_code::too_big};  // Beast has closed it with 1009
  return {"client", websocket::close_code::none};  // the connection ended without a close
}

// Calls `expired` once the socket is `max_age` old (0: never), unless
// disarmed first. The wait's handler may run after the session has moved
// on, so what it may touch is behind a flag it shares.
class socket_age_timer {
 public:
  socket_age_timer(executor ex, std::chrono::milliseconds max_age, std::function<void()> expired)
      : timer_(ex), armed_(std::make_shared<std::function<void()>>(std::move(expired))) {
    if (max_age.count() <= 0) return;
    timer_.expires_after(max_age);
    timer_.async_wait([armed = armed_](error_code ec) {
      if (!ec && *armed) (*armed)();
    });
  }
  ~socket_age_timer() { disarm(); }
  socket_age_timer(const socket_age_timer&) = delete;
  socket_age_timer& operator=(const socket_age_timer&) = delete;
  void disarm() {
    *armed_ = nullptr;
    timer_.cancel();
  }

 private:
  asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>, executor> timer_;
  std::shared_ptr<std::function<void()>> armed_;
};

// The open sockets gauge, held while both legs are open.
class open_socket_count {
 public:
  explicit open_socket_count(services& svc) : svc_(svc) { svc_.metrics.active_websockets.get().add(1); }
  ~open_socket_count() { svc_.metrics.active_websockets.get().add(-1); }
  open_socket_count(const open_socket_count&) = delete;
  open_socket_count& operator=(const open_socket_count&) = delete;

 private:
  services& svc_;
};

// Opens the upstream leg; on a refusal or failure answers the client and
// returns null.
template <class Stream>
awaitable<std::shared_ptr<upstream_socket>> open_upstream(shard& sh, Stream& stream, const rewrite::upstream_route& route,
                                                          const http::request_header<>& upgrade,
                                                          const http::fields& fields, upstream_socket::opening& opened) {
  auto& svc = sh.svc();
  auto* pool = sh.pool_for(route.family);
  std::optional<proxy_error> failure;
  std::shared_ptr<upstream_socket> leg;
  if (!pool) {
    failure = proxy_error{error_kind::upstream_not_configured,
                          "no upstream for the " + std::string(route.family) + " APIs: start gistproxy with --" +
                              std::string(route.family) + "-upstream URL (or --upstream)"};
  } else if (auto lease = co_await pool->acquire(true); lease.error) {
    failure = lease.error;
  } else {
    leg = std::make_shared<upstream_socket>(std::move(lease.connection), svc.cfg.max_body_bytes);
    auto target = std::string_view(upgrade.target());
    if (!route.local_prefix.empty() && target.starts_with(route.local_prefix)) target.remove_prefix(route.local_prefix.size());
    opened = co_await leg->open(pool->target().host_header(), pool->target().join(target), fields,
                                svc.cfg.connect_timeout, svc.cfg.stream_idle_timeout);
    if (opened.accepted()) co_return leg;
    failure = opened.error;
  }
  svc.metrics.websockets.labels({failure ? "failed" : "refused"}).inc();
  if (failure) co_await refuse_upgrade(stream, failure->status(), {}, failure->json_body());
  else co_await refuse_upgrade(stream, opened.status, opened.fields, std::move(opened.body));
  co_return nullptr;
}

// One client message: a response.create runs as a request; another goes upstream as it is.
template <class Stream>
awaitable<bool> serve_message(shard& sh, websocket::stream<Stream&>& ws, tcp_socket& socket, upstream_socket& leg,
                              connection_memo& memo, const http::request_header<>& upgrade, const http::fields& fields,
                              std::string_view text) {
  auto& svc = sh.svc();
  auto frame = rewrite::read_client_frame(text, svc.cfg.max_body_bytes);
  svc.metrics.websocket_messages.labels({kind_name(frame.kind)}).inc();
  if (frame.kind == rewrite::client_frame_kind::other) co_return !co_await leg.send_text(text);
  socket_ws_channel<Stream> channel(ws, socket, leg, svc.cfg.max_body_bytes);
  if (frame.kind == rewrite::client_frame_kind::refused) {
    const nlohmann::json error{{"error", {{"type", "invalid_request_error"}, {"message", std::string(frame.refusal)}}}};
    const http::fields none;
    co_return !co_await channel.whole_response(reply_head{400, {}, none, std::nullopt}, error.dump());
  }
  auto request = request_of(upgrade, fields, std::move(frame.request_body));
  co_await dispatch(sh, channel, memo, request, std::nullopt);
  // A response cut short, or one whose rest the upstream socket may still
  // send, leaves it in no known state. An upstream that closed after a whole
  // response is the mailbox's next event, with its code.
  co_return channel.ended() && !leg.given_up();
}

}  // namespace

std::optional<rewrite::upstream_route> socket_route(const services& svc, const http::request_header<>& request) {
  if (request.method() != http::verb::get || !websocket::is_upgrade(request)) return std::nullopt;
  // Routed as the messages' requests will be: POST on the same target.
  client_request as_post{http::verb::post, request.target(), 11};
  for (const auto& f : request) as_post.insert(f.name_string(), f.value());
  auto route = route_of(svc, as_post);
  if (!route.api || !route.api->wire().speaks_over_socket() || misdirects(svc, route)) return std::nullopt;
  return route;
}

// The client's reader: one read always pending (the client's pongs and
// close are read while a response streams), each message handed to the
// session through the mailbox, at most one read ahead.
template <class Stream>
awaitable<void> read_client(websocket::stream<Stream&>& ws, socket_mailbox& mailbox,
                            asio::experimental::channel<void(error_code)>& exited) {
  for (;;) {
    beast::flat_buffer buffer;
    auto [ec, n] = co_await ws.async_read(buffer, use_nothrow);
    socket_event e;
    e.error = ec;
    if (ec == websocket::error::closed) e.code = websocket::close_code(ws.reason().code);
    if (!ec) {
      e.binary = !ws.got_text();
      e.text = beast::buffers_to_string(buffer.data());
    }
    const bool last = ec || e.binary;
    if (!co_await mailbox.post_client(std::move(e)) || last) break;
  }
  exited.try_send(error_code{});
}

template <class Stream>
awaitable<void> serve_websocket(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& deadline,
                                session_handle& handle, const rewrite::upstream_route& route,
                                http::request<http::string_body> upgrade) {
  auto& svc = sh.svc();
  deadline.disarm();  // from here the sockets' own timeouts (below and upstream_socket) bound every wait
  const http::fields fields = end_to_end_of(upgrade);
  upstream_socket::opening opened;
  auto leg = co_await open_upstream(sh, stream, route, upgrade, fields, opened);
  if (!leg) co_return;
  websocket::stream<Stream&> ws(stream);
  websocket::stream_base::timeout t = websocket::stream_base::timeout::suggested(beast::role_type::server);
  t.idle_timeout = svc.cfg.idle_timeout;
  t.keep_alive_pings = true;  // a live client answers, so only a dead one is dropped
  ws.set_option(t);
  ws.read_message_max(svc.cfg.max_body_bytes);
  ws.set_option(websocket::stream_base::decorator([&opened](websocket::response_type& res) {
    for_each_end_to_end_field(opened.fields, [&](const auto& f) {
      if (!socket_field(f.name_string())) res.insert(f.name_string(), f.value());
    });
  }));
  if (auto [ec] = co_await ws.async_accept(upgrade, use_nothrow); ec) {
    svc.metrics.websockets.labels({"failed"}).inc();
    co_await leg->close(websocket::close_code::going_away);
    co_return;
  }
  svc.metrics.websockets.labels({"accepted"}).inc();
  open_socket_count counted(svc);
  socket_mailbox mailbox(socket.get_executor());
  leg->start_reading(mailbox, [&svc] { svc.metrics.websocket_messages.labels({"upstream_dropped"}).inc(); });
  asio::experimental::channel<void(error_code)> client_reader_exited(socket.get_executor(), 1);
  asio::co_spawn(socket.get_executor(), read_client(ws, mailbox, client_reader_exited), asio::detached);
  // A drain, or the socket's age past --websocket-max-age, closes an idle
  // socket at once with 1001 (Beast allows a close beside the pending read,
  // which then ends); a busy one after its message.
  bool closing_between_messages = false;
  auto close_if_idle = [&] {
    if (handle.busy || closing_between_messages || !ws.is_open()) return;
    closing_between_messages = true;
    ws.async_close(websocket::close_code::going_away, [](error_code) {});
  };
  handle.drain = close_if_idle;
  bool aged = false;
  socket_age_timer age(socket.get_executor(), svc.cfg.websocket_max_age, [&] {
    aged = true;
    close_if_idle();
  });
  connection_memo memo;
  socket_end end;
  while (true) {
    if (svc.draining || aged) {
      end.code = websocket::close_code::going_away;
      break;
    }
    handle.busy = false;
    auto e = co_await mailbox.next();
    handle.busy = true;
    if (!e.from_client) {  // the upstream, between two responses
      if (e.error) {
        end = {"upstream", e.code == websocket::close_code::none ? websocket::close_code::internal_error : e.code};
        break;
      }
      // An event outside a response (one a message forwarded as it is
      // caused): the client's, as it came.
      svc.metrics.websocket_messages.labels({"upstream_relayed"}).inc();
      ws.text(!e.binary);
      if (auto [wec, wn] = co_await ws.async_write(asio::buffer(e.text), use_nothrow); wec) {
        end = {"client", websocket::close_code::none};
        break;
      }
      continue;
    }
    if (e.error) {  // the client closed or left, or its message was too big, or the drain closed it
      end = closing_between_messages ? socket_end{"gistproxy", websocket::close_code::going_away}
                                     : client_read_end(e.error, e.code);
      break;
    }
    if (e.binary) {
      svc.metrics.websocket_messages.labels({"binary"}).inc();
      end.code = websocket::close_code::unknown_data;  // 1003: only JSON text messages
      break;
    }
    if (!co_await serve_message(sh, ws, socket, *leg, memo, upgrade, fields, e.text)) {
      // An upstream that closed is relayed with its code (1001 on its restart
      // lets the client reconnect at once); anything else is the proxy's 1011.
      const auto upstream_code = leg->upstream_close();
      end = upstream_code != websocket::close_code::none ? socket_end{"upstream", upstream_code}
                                                          : socket_end{"gistproxy", websocket::close_code::internal_error};
      break;
    }
  }
  handle.drain = nullptr;
  age.disarm();
  svc.metrics.websocket_closes.labels({end.side, code_name(end.code)}).inc();
  // The upstream leg ends as the client's did (a client's 1003 is the proxy's refusal, not the upstream's business).
  const bool clean = end.code == websocket::close_code::normal || end.code == websocket::close_code::going_away;
  co_await leg->close(clean ? end.code : websocket::close_code::normal);
  if (end.side != "client" && ws.is_open() && !closing_between_messages) co_await ws.async_close(end.code, use_nothrow);
  // The client's reader ends before `ws` goes: its read is cut if the close did not end it.
  mailbox.close();
  error_code ignored;
  socket.cancel(ignored);
  co_await client_reader_exited.async_receive(use_nothrow);
  // A close the proxy began may cross bytes the client is still sending (a
  // message too big): dropped for a moment, so the close frame reaches it.
  if (end.side != "client") co_await lingering_close(socket, deadline);
}

template awaitable<void> serve_websocket(shard&, tcp_socket&, tcp_socket&, socket_deadline&, session_handle&,
                                         const rewrite::upstream_route&, http::request<http::string_body>);
template awaitable<void> serve_websocket(shard&, tls_stream&, tcp_socket&, socket_deadline&, session_handle&,
                                         const rewrite::upstream_route&, http::request<http::string_body>);

}  // namespace gistproxy::proxy
