// What a WebSocket session waits for between two responses, in the order it
// happened: the client's next message (or its end), and whatever the
// upstream sends outside a response (an event for a message forwarded as it
// is, or the upstream's close). Two readers fill it, one per leg, so both
// sockets always have a read pending: their pings are answered and a close
// is seen when it comes, not at the next message.
//
// Bounded: the client's reader waits for room (one message read ahead at
// most); the upstream's messages outside a response are dropped past
// `upstream_room` (counted by the caller), but its end always fits, so a
// session is always woken by an upstream that goes away.
#pragma once

#include <boost/asio/experimental/channel.hpp>
#include <boost/beast/websocket.hpp>
#include <string>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

struct socket_event {
  bool from_client = true;
  std::string text;
  bool binary = false;
  error_code error;  // the leg ended: closed (with `code`) or failed
  beast::websocket::close_code code = beast::websocket::close_code::none;
};

class socket_mailbox {
 public:
  static constexpr unsigned upstream_room = 16;

  explicit socket_mailbox(executor ex) : events_(ex, upstream_room + 2), taken_(ex, 1) {}

  // The client's reader: returns once the session took the message (so at
  // most one is read ahead). False once the mailbox is closed.
  awaitable<bool> post_client(socket_event e) {
    auto [ec] = co_await events_.async_send(error_code{}, std::move(e), use_nothrow);
    if (ec) co_return false;
    auto [taken_ec] = co_await taken_.async_receive(use_nothrow);
    co_return !taken_ec;
  }
  // The upstream's reader, never waiting: false when the message was dropped
  // (no room, or the mailbox closed). An ending always has room.
  bool offer_upstream(socket_event e) {
    e.from_client = false;
    if (!e.error && upstream_queued_ >= upstream_room) return false;
    if (!events_.try_send(error_code{}, std::move(e))) return false;
    ++upstream_queued_;
    return true;
  }
  // The next event; an error event (client gone) once closed.
  awaitable<socket_event> next() {
    auto [ec, e] = co_await events_.async_receive(use_nothrow);
    if (ec) co_return socket_event{true, {}, false, ec, beast::websocket::close_code::none};
    if (!e.from_client && upstream_queued_ > 0) --upstream_queued_;
    if (e.from_client) taken_.try_send(error_code{});
    co_return e;
  }
  // Wakes every waiting reader with an error; later posts fail.
  void close() {
    events_.close();
    taken_.close();
  }

 private:
  asio::experimental::channel<void(error_code, socket_event)> events_;
  asio::experimental::channel<void(error_code)> taken_;
  unsigned upstream_queued_ = 0;
};

}  // namespace gistproxy::proxy
