// Every byte the client receives goes through one client_writer: response
// heads made from the upstream's, whole bodies, streamed pieces, SSE events,
// error answers. It decides what the answer says (status, end-to-end fields,
// length, a HEAD request's empty body, an error's JSON) and hands that to the
// transport's channel (proxy/net/client_channel.hpp), which frames it: the
// writer never knows which transport carries it. It counts bytes out,
// captures them for --record, and notices a client that went away (every
// write then returns false and the reply says so).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proxy/net/beast.hpp"
#include "proxy/net/client_channel.hpp"
#include "proxy/net/proxy_error.hpp"

namespace gistproxy::proxy {

using client_request = http::request<http::string_body>;

// What the client got, read by the exchange's finish.
struct client_reply {
  int status = 0;
  bool started = false;           // a response head reached the client
  bool keep_alive = true;         // the connection may serve another request (the exchange's and the channel's say)
  std::uint64_t bytes_out = 0;    // body bytes written
  std::optional<proxy_error> error;  // why the exchange did not end cleanly (set by the writer or the phases)
  std::optional<std::string> recorded;  // --record: the body bytes the client got (capped)
  bool recorded_truncated = false;
};

class client_writer {
 public:
  // `keep_alive`: false when the exchange ends the connection after this
  // response (refused requests); the channel may end it too.
  client_writer(client_channel& channel, const client_request& request, bool keep_alive, bool record);

  // A whole response: the upstream's status and end-to-end fields, `body`
  // with its length (a HEAD answer keeps the upstream's length, no body).
  awaitable<bool> whole(const http::response_header<>& from, std::string_view body);
  // A streamed response's head, with the body's length when known.
  awaitable<bool> stream_head(const http::response_header<>& from, std::optional<std::uint64_t> length);
  // One piece of a streamed body; `last` ends it.
  awaitable<bool> piece(std::string_view data, bool last);
  // An error answer (JSON, with x-gistproxy-error); once the head is out only
  // an abnormal end can signal it, so the connection is closed instead.
  awaitable<void> error(const proxy_error& e);

  // Pieces another writer sent while the exchange wrote nothing (keep-alive
  // events while a page-in hop waits: keepalive_ticker), once it stopped:
  // counted in bytes_out and kept for --record in the order the client got
  // them, as if piece() had sent them.
  void sent_elsewhere(std::string_view data, std::uint64_t times);
  client_channel& channel() { return channel_; }
  client_reply& reply() { return reply_; }
  const client_reply& reply() const { return reply_; }
  bool gone() const { return gone_; }
  bool head_request() const { return head_request_; }

  static constexpr std::size_t record_limit = 8u << 20;

 private:
  void started(unsigned status);
  // After a head: the connection is kept only if the channel keeps it too.
  void headed() { reply_.keep_alive = reply_.keep_alive && channel_.keeps_connection(); }
  bool failed(error_code ec, std::string_view what);
  void counted(std::string_view body);

  client_channel& channel_;
  bool head_request_;
  bool gone_ = false;
  client_reply reply_;
};

}  // namespace gistproxy::proxy
