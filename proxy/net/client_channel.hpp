// The client side of one exchange, whatever carries it: a byte stream that
// the writer frames as HTTP/1.x (stream_channel), or a transport that frames
// each response itself (an HTTP/2 stream: message_channel). The exchange's
// phases see only this, so they run unchanged over either.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "proxy/net/beast.hpp"
#include "proxy/net/client_watch.hpp"
#include "proxy/net/deadlines.hpp"

namespace gistproxy::proxy {

// A transport that frames responses itself (HTTP/2): the writer hands it a
// status with the fields to send, then body pieces. HTTP/1.x framing (status
// line, chunked coding, Connection) is never used with it.
class message_channel {
 public:
  virtual ~message_channel() = default;
  // `from`: the fields whose end-to-end ones are sent; `length`: the body's
  // size when known; `ends`: no body follows (the response is complete).
  virtual awaitable<error_code> head(unsigned status, const http::fields& from, std::optional<std::uint64_t> length,
                                     bool ends) = 0;
  // One body piece; `last` ends the response. Returns once the piece is
  // buffered within the transport's bound (back-pressure), not necessarily sent.
  virtual awaitable<error_code> data(std::string_view bytes, bool last) = 0;
};

class client_channel {
 public:
  virtual ~client_channel() = default;
  // Body bytes, framed by the writer where the transport needs it (HTTP/1.x
  // heads and chunks); on a message_channel, body bytes as they are.
  virtual awaitable<error_code> write(std::span<const asio::const_buffer> bytes) = 0;
  // The message framing of this transport; null for a byte stream (HTTP/1.x).
  virtual message_channel* messages() { return nullptr; }
  // Starts `watch` noticing a client that leaves while the request is upstream.
  virtual void watch(client_watch& watch) = 0;
  virtual executor get_executor() = 0;
};

// A byte stream to the client (its TCP socket, or TLS over it: Stream) that
// HTTP/1.x is framed on; each write must finish within `timeout`. The
// deadline and the departure watch work on the TCP socket underneath.
template <class Stream>
class stream_channel final : public client_channel {
 public:
  stream_channel(Stream& stream, tcp_socket& socket, socket_deadline& deadline, std::chrono::milliseconds timeout)
      : stream_(stream), socket_(socket), deadline_(deadline), timeout_(timeout) {}
  awaitable<error_code> write(std::span<const asio::const_buffer> bytes) override;
  void watch(client_watch& watch) override { watch.peek(socket_); }
  executor get_executor() override { return socket_.get_executor(); }

 private:
  Stream& stream_;
  tcp_socket& socket_;
  socket_deadline& deadline_;
  std::chrono::milliseconds timeout_;
};

}  // namespace gistproxy::proxy
