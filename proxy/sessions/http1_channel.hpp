// One HTTP/1.x response as the exchange sees it: the channel that frames
// what the exchange answers (proxy/net/client_channel.hpp) on an HTTP/1.x
// connection. It owns the framing: the status line, Content-Length or
// chunked coding (close-delimited for HTTP/1.0), the chunks and the last
// chunk, and whether the connection is kept (Connection).
//
// http1_channel frames and decides; it writes through send(), which the
// session's socket_channel implements over the client's TCP socket or TLS
// stream (and a unit test over a string).
#pragma once

#include <atomic>
#include <chrono>
#include <span>
#include <string>

#include "proxy/net/client_channel.hpp"
#include "proxy/net/deadlines.hpp"

namespace gistproxy::proxy {

class http1_channel : public client_channel {
 public:
  // `request_version` and `keep_alive`: the request's, which this response
  // answers (its HTTP version; whether it lets the connection be kept, as
  // Beast's keep_alive() reads its Connection). `draining`: a drain that has
  // begun by the time the head is written ends the connection after it.
  http1_channel(unsigned request_version, bool keep_alive, const std::atomic<bool>& draining);

  // The head with Content-Length when the length is known, then the body.
  awaitable<error_code> whole_response(const reply_head& head, std::string_view body) final;
  // The head with Content-Length when known, else chunked (HTTP/1.1) or
  // close-delimited (HTTP/1.0: the connection closes after the body).
  awaitable<error_code> begin_response(const reply_head& head) final;
  // A chunk (or bytes as they are when not chunked); `last` adds the last chunk.
  awaitable<error_code> write_body(std::string_view bytes, bool last) final;
  bool keeps_connection() const final { return keep_alive_; }

 protected:
  // Writes `bytes` to the client, bounded in time by the implementation.
  virtual awaitable<error_code> send(std::span<const asio::const_buffer> bytes) = 0;

 private:
  // The head's bytes; decides keep-alive (and chunking, when `streamed`).
  std::string head_bytes(const reply_head& head, bool streamed);

  unsigned version_;  // of the response: the request's, 1.1 for anything older than 1.0
  bool keep_alive_;
  bool chunked_ = false;
  const std::atomic<bool>& draining_;
};

// The channel over the client's byte stream (its TCP socket, or TLS over
// it: Stream); each write must finish within `timeout`. The deadline and the
// departure watch work on the TCP socket underneath.
template <class Stream>
class socket_channel final : public http1_channel {
 public:
  socket_channel(Stream& stream, tcp_socket& socket, socket_deadline& deadline, std::chrono::milliseconds timeout,
                 const http::request<http::string_body>& request, const std::atomic<bool>& draining)
      : http1_channel(request.version(), request.keep_alive(), draining), stream_(stream), socket_(socket),
        deadline_(deadline), timeout_(timeout) {}
  void watch(client_watch& watch) override { watch.peek(socket_); }
  executor get_executor() override { return socket_.get_executor(); }

 private:
  awaitable<error_code> send(std::span<const asio::const_buffer> bytes) override;

  Stream& stream_;
  tcp_socket& socket_;
  socket_deadline& deadline_;
  std::chrono::milliseconds timeout_;
};

}  // namespace gistproxy::proxy
