#include "proxy/sessions/http1_channel.hpp"

#include <boost/asio/write.hpp>

#include "proxy/net/http_writer.hpp"
#include "proxy/net/tls_stream.hpp"

namespace gistproxy::proxy {

http1_channel::http1_channel(unsigned request_version, bool keep_alive, const std::atomic<bool>& draining)
    : version_(request_version >= 10 ? request_version : 11), keep_alive_(keep_alive), draining_(draining) {}

std::string http1_channel::head_bytes(const reply_head& head, bool streamed) {
  auto out = head_builder::response(version_, head.status, head.reason, head_size_hint(head.fields));
  out.end_to_end_fields_of(head.fields);
  if (head.length) {
    out.content_length(*head.length);
  } else if (streamed && version_ >= 11) {
    chunked_ = true;
    out.field("Transfer-Encoding", "chunked");
  } else if (streamed) {
    keep_alive_ = false;  // HTTP/1.0 has no chunked coding: the body ends when we close
  }
  if (head.close || draining_.load()) keep_alive_ = false;
  return std::move(out.connection(version_, keep_alive_)).finish();
}

awaitable<error_code> http1_channel::whole_response(const reply_head& head, std::string_view body) {
  const std::string bytes_of_head = head_bytes(head, false);
  std::array<asio::const_buffer, 2> bytes{asio::buffer(bytes_of_head), asio::buffer(body)};
  co_return co_await send(bytes);
}

awaitable<error_code> http1_channel::begin_response(const reply_head& head) {
  const std::string bytes_of_head = head_bytes(head, true);
  std::array<asio::const_buffer, 1> bytes{asio::buffer(bytes_of_head)};
  co_return co_await send(bytes);
}

awaitable<error_code> http1_channel::write_body(std::string_view data, bool last) {
  // Without chunking an empty piece has nothing to say, even the last one:
  // the length said, or the connection's close, ends the body.
  if (data.empty() && !(last && chunked_)) co_return error_code{};
  const bool framed = chunked_ && !data.empty();
  const std::string prefix = framed ? chunk_prefix(data.size()) : std::string();
  std::array<asio::const_buffer, 4> bytes{asio::buffer(prefix), asio::buffer(data),
                                          asio::buffer(framed ? chunk_suffix : std::string_view()),
                                          asio::buffer(chunked_ && last ? last_chunk : std::string_view())};
  co_return co_await send(bytes);
}

template <class Stream>
awaitable<error_code> socket_channel<Stream>::send(std::span<const asio::const_buffer> bytes) {
  auto bounded = deadline_.arm(timeout_);
  auto [ec, n] = co_await asio::async_write(stream_, bytes, use_nothrow);
  co_return deadline_.verdict(ec);
}

template class socket_channel<tcp_socket>;
template class socket_channel<tls_stream>;

}  // namespace gistproxy::proxy
