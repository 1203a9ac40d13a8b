// The client side of one HTTP/2 connection to an upstream, without sockets:
// requests in (submit, send_data), bytes out (take_output), bytes in
// (receive), response heads, body pieces and stream ends out
// (h2_client_events). It exists for requests whose SigV4 signature covers
// :authority (the AWS SDK for JavaScript over HTTP/2): such a request can
// only be forwarded over HTTP/2, its pseudo-fields and fields exactly as the
// client sent them. nghttp2 does the framing, HPACK, flow control, PING and
// SETTINGS; this class bounds what an upstream can make it hold: a response
// head's size, the response bytes not yet consumed (flow control windows
// opened only as the caller consumes), the streams open at once.
// The caller drives it on one thread. From inside an event it may call
// submit, send_data, consumed and reset, never receive or take_output.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct nghttp2_session;

namespace gistproxy::proxy {

using h2_fields = std::vector<std::pair<std::string, std::string>>;

struct h2_client_limits {
  // Streams open at once, whatever the upstream allows (it may allow fewer).
  std::uint32_t max_streams = 100;
  // A response head (and its trailers), decoded: name + value + 32 per
  // field (RFC 9113 §6.5.2), as the server side bounds a request head.
  std::uint32_t max_header_list = 256 * 1024;
  // Response body bytes handed over and not yet consumed(): per stream, and
  // on the connection. The windows reopen only as the caller consumes.
  // (Until the upstream acknowledges the SETTINGS, a stream may still take
  // HTTP/2's default 65,535 bytes: RFC 9113 §6.9.2.)
  std::uint32_t stream_window = 1u << 20;
  std::uint32_t connection_window = 16u << 20;
  // Request body bytes a streamed request may have buffered here.
  std::size_t max_send_buffered = 4u << 20;
};

struct h2_client_request {
  // Sent verbatim, in this order: :method, :scheme, :authority, :path.
  std::string method, scheme, authority, path;
  // Sent in this order after them, names lower-cased, values verbatim. The
  // caller leaves out hop-by-hop fields (HTTP/2 forbids them).
  h2_fields fields;
};

// Why a stream ended without its response: the retry decision and the metric label.
enum class h2_client_failure {
  reset,        // the upstream reset it (RST_STREAM); `code` says why
  refused,      // REFUSED_STREAM, or above a GOAWAY's last stream: never processed, safe to retry
  header_list,  // the response head was over max_header_list or a field over 65,533 bytes
  connection,   // the connection ended (protocol error, connection_lost) before the response did
  internal,     // one of gistproxy's callbacks failed, or the request could not be sent
};
std::string_view h2_client_failure_name(h2_client_failure f);

class h2_client_events {
 public:
  virtual ~h2_client_events() = default;
  // The final response head (1xx ones are skipped): fields in the order received.
  virtual void response_head(std::int32_t stream, unsigned status, h2_fields fields) = 0;
  // A piece of the response body; consumed() it once it has gone on.
  virtual void response_data(std::int32_t stream, std::string_view bytes) = 0;
  virtual void response_end(std::int32_t stream) = 0;
  // The stream ended before its response did; nothing more comes for it.
  virtual void stream_failed(std::int32_t stream, h2_client_failure why, std::uint32_t code) = 0;
  // Some of the stream's buffered request body went out: a writer waiting for room may go on.
  virtual void drained(std::int32_t stream) = 0;
  // The upstream sent GOAWAY (`code`: its error code), or the connection
  // failed here (the code of gistproxy's GOAWAY; INTERNAL_ERROR when the
  // socket was lost): no new stream opens here (told once). Streams the
  // GOAWAY covers still finish.
  virtual void connection_ended(std::uint32_t code) = 0;
  // One of gistproxy's nghttp2 callbacks threw: nothing crossed into nghttp2.
  virtual void callback_failed() = 0;
};

class h2_client_connection {
 public:
  h2_client_connection(h2_client_events& events, const h2_client_limits& limits);
  ~h2_client_connection();
  h2_client_connection(const h2_client_connection&) = delete;
  h2_client_connection& operator=(const h2_client_connection&) = delete;

  // Feeds bytes from the upstream. False when the connection must end: a
  // protocol error (take_output() then holds the GOAWAY to send), or a
  // GOAWAY came and no stream is left.
  bool receive(std::string_view bytes);
  // Appends the frames to send (the preface and SETTINGS first) to `out`;
  // false when there are none.
  bool take_output(std::string& out);
  // Neither side has anything more to say: the socket may close.
  bool finished() const;
  // The socket failed or closed: every open stream fails (`connection`).
  void connection_lost();

  // A new stream may open now: no GOAWAY, fewer streams than both limits.
  bool can_submit() const;
  // Opens a stream for `r`. `body`: the request body's first bytes (or all
  // of it); `last`: nothing more follows (else send_data goes on). No body
  // and `last`: the HEADERS frame ends the stream. Nullopt when no stream
  // can open (can_submit()) or nghttp2 refused the request.
  std::optional<std::int32_t> submit(const h2_client_request& r, std::string body = {}, bool last = true);
  // More of a streamed request body, buffered until flow control lets it
  // out; `last` ends it. False when the stream is gone or the buffer would
  // pass max_send_buffered (wait for drained()).
  bool send_data(std::int32_t stream, std::string_view bytes, bool last);
  // Bytes of the stream's request body still buffered here.
  std::size_t buffered(std::int32_t stream) const;
  // The caller is done with `bytes` of the stream's response body: the
  // upstream may send that much more.
  void consumed(std::int32_t stream, std::size_t bytes);
  // gistproxy gives up the stream (its client went away): RST_STREAM, and
  // no event for it follows.
  void reset(std::int32_t stream, std::uint32_t code);
  std::size_t streams_open() const { return streams_.size(); }

 private:
  struct stream_state;
  friend struct h2_client_callbacks;
  // What the callbacks (h2_client_callbacks.cpp) step into.
  int add_field(std::int32_t stream, std::string_view name, std::string_view value);
  void add_body(std::int32_t stream, std::string_view bytes);
  void frame_received(std::uint8_t frame_type, std::uint8_t flags, std::int32_t stream, std::uint32_t goaway_error);
  void request_not_sent(std::int32_t stream);
  void stream_ended(std::int32_t stream, std::uint32_t code);
  long take_data(std::int32_t stream, std::uint8_t* buf, std::size_t length, std::uint32_t* flags);
  void head_complete(std::int32_t stream, stream_state& s);
  void end_connection(std::uint32_t code);
  void fail_all(h2_client_failure why);

  h2_client_events& events_;
  h2_client_limits limits_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<std::int32_t, std::unique_ptr<stream_state>> streams_;
  bool ended_ = false;  // GOAWAY received or the connection failed: told once
};

}  // namespace gistproxy::proxy
