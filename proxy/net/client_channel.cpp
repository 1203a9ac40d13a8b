#include "proxy/net/client_channel.hpp"

#include <boost/asio/write.hpp>

#include "proxy/net/tls_stream.hpp"

namespace gistproxy::proxy {

template <class Stream>
awaitable<error_code> stream_channel<Stream>::write(std::span<const asio::const_buffer> bytes) {
  auto bounded = deadline_.arm(timeout_);
  auto [ec, n] = co_await asio::async_write(stream_, bytes, use_nothrow);
  co_return deadline_.verdict(ec);
}

template class stream_channel<tcp_socket>;
template class stream_channel<tls_stream>;

}  // namespace gistproxy::proxy
