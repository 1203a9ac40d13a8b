#include "proxy/net/client_watch.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>

namespace gistproxy::proxy {

client_watch::client_watch() : state_(std::make_shared<state>()) {}

client_watch::~client_watch() {
  state_->active = false;
  state_->upstream = nullptr;
  cancel_.emit(asio::cancellation_type::all);
}

void client_watch::left(state& s) {
  s.gone = true;
  if (s.upstream) {
    error_code ignored;
    s.upstream->tcp().close(ignored);
  }
}

void client_watch::guard(upstream_connection* c) {
  state_->upstream = c;
  if (state_->gone) left(*state_);
}

std::function<void()> client_watch::departure() {
  return [s = state_] {
    if (s->active) left(*s);
  };
}

// A one-byte peek rather than a wait-for-readable: Asio starts a wait
// without trying it first, so every wait re-registers the descriptor with
// epoll (an epoll_ctl per request) and then needed a peek of its own to tell
// data from a close; a receive tries a non-blocking peek first (one recv that
// finds nothing, the usual case) and then waits on the registration the
// socket already has. Same syscall count, one less round trip on wake-up.
void client_watch::peek(tcp_socket& client) {
  auto s = state_;
  client.async_receive(
      asio::buffer(&s->peeked, 1), tcp_socket::message_peek,
      asio::bind_cancellation_slot(cancel_.slot(), [s](error_code ec, std::size_t n) {
        if (!s->active || ec == asio::error::operation_aborted) return;  // finished or cancelled
        if (!ec && n > 0) return;  // bytes of a pipelined next request: the client is still there
        left(*s);                  // orderly close (eof) or reset
      }));
}

}  // namespace gistproxy::proxy
