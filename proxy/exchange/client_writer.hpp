// Every byte the client receives goes through one client_writer: response
// heads made from the upstream's, whole bodies, streamed pieces (chunked for
// HTTP/1.1, close-delimited for HTTP/1.0), SSE events, error answers. It
// counts bytes out, captures them for --record, and notices a client that
// went away (every write then returns false and the reply says so).
//
// The transport is behind `client_channel` (proxy/net/client_channel.hpp):
// HTTP/1.x bytes framed here, or an HTTP/2 stream that frames the heads and
// pieces handed to it; and the phases can be unit-tested against a channel
// that records bytes or fails on demand.
#pragma once

#include <atomic>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "proxy/net/beast.hpp"
#include "proxy/net/client_channel.hpp"
#include "proxy/net/deadlines.hpp"
#include "proxy/net/proxy_error.hpp"

namespace gistproxy::proxy {

using client_request = http::request<http::string_body>;

// What the client got, read by the exchange's finish.
struct client_reply {
  int status = 0;
  bool started = false;           // a status line reached the client
  bool keep_alive = true;         // the connection may serve another request
  std::uint64_t bytes_out = 0;    // body bytes written
  std::optional<proxy_error> error;  // why the exchange did not end cleanly (set by the writer or the phases)
  std::optional<std::string> recorded;  // --record: the body bytes the client got (capped)
  bool recorded_truncated = false;
};

class client_writer {
 public:
  // `keep_alive`: whether the connection may be reused after this response.
  client_writer(client_channel& channel, const client_request& request, bool keep_alive, bool record);

  // A whole response: the upstream's status and end-to-end fields, `body`
  // with its Content-Length (a HEAD answer keeps the upstream's length).
  awaitable<bool> whole(const http::response_header<>& from, std::string_view body);
  // A streamed response's head: Content-Length when known, else chunked
  // (HTTP/1.1) or close-delimited (HTTP/1.0: the connection then closes).
  awaitable<bool> stream_head(const http::response_header<>& from, std::optional<std::uint64_t> length);
  // One piece of a streamed body; `last` also ends a chunked body.
  awaitable<bool> piece(std::string_view data, bool last);
  // An error answer (JSON, with x-gistproxy-error); once the head is out only
  // an abnormal end can signal it, so the connection is closed instead.
  awaitable<void> error(const proxy_error& e);

  // A drain that starts while this response is built ends the connection
  // after it: the head then says Connection: close.
  void close_when(const std::atomic<bool>& draining) { draining_ = &draining; }

  // The framing of one streamed piece, for writers outside the exchange's
  // coroutine (keep-alive events while a page-in hop waits).
  std::string framed(std::string_view data) const;
  // Such a writer's pieces, once it stopped: counted in bytes_out and kept
  // for --record in the order the client got them (the exchange wrote
  // nothing meanwhile), as if piece() had sent them.
  void sent_elsewhere(std::string_view data, std::uint64_t times);
  client_channel& channel() { return channel_; }
  client_reply& reply() { return reply_; }
  const client_reply& reply() const { return reply_; }
  bool gone() const { return gone_; }
  bool head_request() const { return head_request_; }

  static constexpr std::size_t record_limit = 8u << 20;

 private:
  awaitable<bool> send(std::span<const asio::const_buffer> bytes, std::string_view what);
  // The same answers over a transport that frames them itself (HTTP/2).
  awaitable<bool> whole_message(message_channel& m, const http::response_header<>& from, std::string_view body);
  awaitable<bool> piece_message(message_channel& m, std::string_view data, bool last);
  awaitable<void> error_message(message_channel& m, const proxy_error& e);
  bool failed(error_code ec, std::string_view what);
  void counted(std::string_view body);
  unsigned version() const { return request_version_ >= 10 ? request_version_ : 11; }

  client_channel& channel_;
  unsigned request_version_;
  bool head_request_;
  bool chunked_ = false;
  bool gone_ = false;
  const std::atomic<bool>* draining_ = nullptr;
  client_reply reply_;
};

}  // namespace gistproxy::proxy
