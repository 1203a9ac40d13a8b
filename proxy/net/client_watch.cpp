#include "proxy/net/client_watch.hpp"

#include <sys/socket.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <cerrno>

namespace gistproxy::proxy {

client_watch::client_watch(tcp_socket& client) : client_(client), state_(std::make_shared<state>()) { arm(); }

client_watch::~client_watch() {
  state_->active = false;
  state_->upstream = nullptr;
  cancel_.emit(asio::cancellation_type::all);
}

void client_watch::arm() {
  client_.async_wait(
      tcp_socket::wait_read,
      asio::bind_cancellation_slot(cancel_.slot(), [this, s = state_](error_code ec) {
        if (!s->active || ec) return;  // finished or cancelled: `this` may be gone
        char byte;
        ssize_t n = ::recv(client_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) return;  // bytes of a pipelined next request: the client is still there
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return arm();
        s->gone = true;  // orderly close (0) or reset
        if (s->upstream) {
          error_code ignored;
          s->upstream->tcp().socket().close(ignored);
        }
      }));
}

}  // namespace gistproxy::proxy
