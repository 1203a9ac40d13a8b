#include "proxy/net/client_channel.hpp"

#include <boost/asio/write.hpp>

namespace gistproxy::proxy {

awaitable<error_code> socket_channel::write(std::span<const asio::const_buffer> bytes) {
  auto bounded = deadline_.arm(timeout_);
  auto [ec, n] = co_await asio::async_write(socket_, bytes, use_nothrow);
  co_return deadline_.verdict(ec);
}

}  // namespace gistproxy::proxy
