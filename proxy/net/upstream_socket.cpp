#include "proxy/net/upstream_socket.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>

#include "proxy/net/hop_by_hop.hpp"
#include "rewrite/dialects/responses/responses_socket.hpp"

namespace gistproxy::proxy {
namespace {

// The handshake's own fields, which Beast writes: the client's would name
// the client's key or extensions, not this socket's.
bool handshake_field(const http::fields::value_type& f) {
  const auto name = f.name();
  return name == http::field::sec_websocket_key || name == http::field::sec_websocket_version ||
         name == http::field::sec_websocket_extensions || name == http::field::sec_websocket_accept ||
         name == http::field::sec_websocket_protocol || name == http::field::content_length;
}

template <class Ws>
void configure(Ws& ws, std::size_t max_message, std::chrono::milliseconds handshake, std::chrono::milliseconds idle,
               const http::fields& client_fields) {
  websocket::stream_base::timeout t{};
  t.handshake_timeout = handshake;
  t.idle_timeout = idle;
  t.keep_alive_pings = true;  // a live upstream answers, so only a dead one times out
  ws.set_option(t);
  ws.read_message_max(max_message);
  // No permessage-deflate: gistproxy reads every message, and compression
  // would only move bytes it must inflate anyway (and their bombs) upstream.
  websocket::permessage_deflate pmd;
  pmd.client_enable = false;
  ws.set_option(pmd);
  // Copied: the decorator runs inside the handshake, after open's caller may have moved on.
  ws.set_option(websocket::stream_base::decorator([fields = client_fields](websocket::request_type& req) {
    for_each_end_to_end_field(fields, [&](const auto& f) {
      if (!handshake_field(f)) req.insert(f.name_string(), f.value());
    });
  }));
}

}  // namespace

upstream_socket::upstream_socket(std::unique_ptr<upstream_connection> connection, std::size_t max_message)
    : connection_(std::move(connection)), max_message_(max_message), replies_(connection_->tcp().get_executor(), 1) {
  if (connection_->tls) tls_ = std::make_unique<tls_ws>(*connection_->tls);
  else plain_ = std::make_unique<plain_ws>(*connection_->plain);
}

upstream_socket::~upstream_socket() = default;

bool upstream_socket::is_open() const { return !closed_ && !broken_ && (tls_ ? tls_->is_open() : plain_->is_open()); }

awaitable<upstream_socket::opening> upstream_socket::open(std::string_view host, std::string_view target,
                                                           const http::fields& fields,
                                                           std::chrono::milliseconds handshake_timeout,
                                                           std::chrono::milliseconds idle_timeout) {
  opening result;
  websocket::response_type answer;
  auto [ec] = co_await with_ws([&](auto& ws) {
    configure(ws, max_message_, handshake_timeout, idle_timeout, fields);
    return ws.async_handshake(answer, host, target, use_nothrow);
  });
  result.status = int(answer.result_int());
  for (const auto& f : answer) result.fields.insert(f.name_string(), f.value());
  if (ec == websocket::error::upgrade_declined && result.status != 0) {
    result.body = std::move(answer.body());  // what the upstream said, for the client that may fall back
  } else if (ec) {
    result.status = 0;
    result.error = ec == beast::error::timeout
                       ? proxy_error{error_kind::upstream_timeout, "the upstream did not answer the WebSocket upgrade in time"}
                       : proxy_error{error_kind::upstream_unreachable, "the WebSocket upgrade to the upstream failed: " + ec.message()};
  }
  co_return result;
}

awaitable<upstream_socket::message> upstream_socket::read_one() {
  message m;
  beast::flat_buffer buffer;
  auto [ec, n] = co_await with_ws([&](auto& ws) { return ws.async_read(buffer, use_nothrow); });
  if (ec) {
    m.error = ec;
    if (ec == websocket::error::closed) {
      m.closed_with = with_ws([](auto& ws) { return websocket::close_code(ws.reason().code); });
      upstream_close_ = m.closed_with;
    }
    closed_ = true;
    co_return m;
  }
  m.binary = with_ws([](auto& ws) { return ws.got_binary(); });
  m.text.assign(static_cast<const char*>(buffer.data().data()), buffer.size());
  if (!m.binary) {
    if (auto event = rewrite::sse_of_upstream_frame(m.text, max_message_)) {
      m.is_event = true;
      m.sse = std::move(event->sse);
      m.ends_response = event->ends_response;
    }
  }
  co_return m;
}

void upstream_socket::start_reading(socket_mailbox& mailbox, std::function<void()> dropped) {
  mailbox_ = &mailbox;
  dropped_ = std::move(dropped);
  asio::co_spawn(connection_->tcp().get_executor(), read_loop(shared_from_this()), asio::detached);
}

// `self` keeps the socket alive while a read is pending; the loop ends with
// the socket, or when close() shut both ways out.
awaitable<void> upstream_socket::read_loop([[maybe_unused]] std::shared_ptr<upstream_socket> self) {
  for (;;) {
    auto m = co_await read_one();
    const bool last = bool(m.error);
    if (expecting_) {
      if (m.ends_response || last) expecting_ = false;  // what follows is not this response's
      auto [ec] = co_await replies_.async_send(error_code{}, std::move(m), use_nothrow);
      if (ec) co_return;  // closed: nobody reads any more
    } else if (mailbox_) {
      if (!mailbox_->offer_upstream(socket_event{false, std::move(m.text), m.binary, m.error, m.closed_with}) && dropped_)
        dropped_();
    }
    if (last) co_return;
  }
}

awaitable<upstream_socket::message> upstream_socket::read(std::chrono::milliseconds within) {
  using namespace asio::experimental::awaitable_operators;
  asio::steady_timer timer(replies_.get_executor(), within);
  auto got = co_await (replies_.async_receive(use_nothrow) || timer.async_wait(use_nothrow));
  message m;
  if (got.index() == 1) {
    m.error = beast::error::timeout;
    broken_ = true;  // the response's rest may still come: nothing later could be told from it
    co_return m;
  }
  auto [ec, received] = std::get<0>(std::move(got));
  if (ec) m.error = ec;
  else m = std::move(received);
  co_return m;
}

awaitable<error_code> upstream_socket::send_text(std::string_view text) {
  auto [ec, n] = co_await with_ws([&](auto& ws) {
    ws.text(true);
    return ws.async_write(asio::buffer(text), use_nothrow);
  });
  if (ec) closed_ = broken_ = true;  // its reader waits on a response that cannot come
  co_return ec;
}

awaitable<void> upstream_socket::close(websocket::close_code code) {
  mailbox_ = nullptr;
  dropped_ = nullptr;
  replies_.close();
  if (!closed_) {
    closed_ = true;
    co_await with_ws([&](auto& ws) { return ws.async_close(code, use_nothrow); });
  }
  // Whatever the close did, the reader's pending read ends with the socket.
  error_code ignored;
  connection_->tcp().close(ignored);
}

}  // namespace gistproxy::proxy
