#include "proxy/net/lingering_close.hpp"

namespace gistproxy::proxy {

awaitable<void> lingering_close(tcp_socket& socket, socket_deadline& deadline) {
  error_code ignored;
  socket.shutdown(tcp_socket::shutdown_send, ignored);
  char sink[16384];
  std::size_t drained = 0;
  auto bounded = deadline.arm(std::chrono::seconds(2));
  while (drained < (64u << 20)) {
    auto [ec, n] = co_await socket.async_read_some(asio::buffer(sink), use_nothrow);
    if (ec) break;
    drained += n;
  }
  socket.close(ignored);
}

}  // namespace gistproxy::proxy
