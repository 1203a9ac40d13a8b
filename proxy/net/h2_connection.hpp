// The server side of one HTTP/2 connection, without sockets: bytes in
// (receive), bytes out (take_output), complete requests and stream ends out
// (h2_events), responses in (respond, send_data). nghttp2 does the framing,
// HPACK, flow control and the protocol's own checks; this class assembles
// requests within gistproxy's limits and refuses the known floods (rapid
// reset, CONTINUATION, SETTINGS and PING), telling the session which.
// The session (proxy/sessions/h2_session.cpp) drives it on one thread; the
// fuzz target drives it with arbitrary bytes.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "proxy/net/proxy_error.hpp"

struct nghttp2_session;

namespace gistproxy::proxy {

struct h2_limits {
  std::uint32_t max_concurrent_streams = 100;
  // The HTTP/1.1 path's header limit, on the decoded list: HPACK lets a few
  // bytes name a large indexed field again and again. (With 16 KB frames and
  // at most 8 CONTINUATION frames, a header block itself stays under 144 KB.)
  std::uint32_t max_header_list = 256 * 1024;
  std::uint64_t max_body = 64u << 20;
  // Request bodies still arriving on one connection, all streams together:
  // past it a stream is refused (REFUSED_STREAM), so 100 streams cannot
  // each hold a body of max_body while they upload.
  std::uint64_t max_receiving = 256u << 20;
  // A request must arrive whole within this of its first frame (the
  // HTTP/1.1 path's --client-timeout): a stream still short of it when the
  // client next sends anything is answered 408, so a client trickling many
  // bodies cannot hold its streams for ever. (A client that goes quiet meets
  // the connection's idle timeout.)
  std::chrono::milliseconds request_time{60'000};
  std::uint32_t initial_window = 1u << 20;  // per stream: a request body of a few MB in a few round trips
  // Resets of either side (CVE-2023-44487 rapid reset: the client's
  // RST_STREAM; CVE-2025-8671 MadeYouReset: the ones a client provokes
  // nghttp2 into sending; streams refused at the limit): more than this
  // within `reset_window` ends the connection with GOAWAY ENHANCE_YOUR_CALM.
  // Resets gistproxy chooses for its own reasons (reset()) do not count.
  std::uint32_t max_resets = 200;
  std::chrono::milliseconds reset_window{10'000};
};

// A request's pseudo-fields byte for byte as the client sent them: a
// client's SigV4 signature over them (the AWS SDK for JavaScript over HTTP/2)
// verifies upstream only if they go there unchanged (proxy/exchange/h2_upstream_hop).
struct h2_pseudo_fields {
  std::string scheme, authority, path;
  bool host_from_authority = false;  // the request's Host is :authority's (the client sent no Host)
};

struct h2_request {
  std::int32_t stream = 0;
  boost::beast::http::request<boost::beast::http::string_body> request;  // version 20, :authority as Host
  h2_pseudo_fields pseudo;
  std::optional<proxy_error> refusal;  // answer this instead of serving the request (400, 413)
};

// Why a connection or a stream was refused: the metric label.
enum class h2_refusal { rapid_reset, flood, header_list, field_size, protocol, body_budget, stream_limit };
std::string_view h2_refusal_name(h2_refusal r);

class h2_events {
 public:
  virtual ~h2_events() = default;
  virtual void request_ready(h2_request r) = 0;
  // The stream ended, normally or reset by either side (`code` is the
  // HTTP/2 error code; 0 for a clean end).
  virtual void stream_closed(std::int32_t stream, std::uint32_t code) = 0;
  // Some of the stream's buffered response went out: a writer waiting for
  // room may go on.
  virtual void drained(std::int32_t stream) = 0;
  virtual void refused(h2_refusal why) = 0;
  // One of gistproxy's nghttp2 callbacks threw (a bug, or memory ran out):
  // nothing crossed into nghttp2; the stream was reset, or the connection
  // ends (receive() returns false) when the callback was not a stream's.
  virtual void callback_failed() = 0;
};

class h2_connection {
 public:
  using clock = std::chrono::steady_clock;
  h2_connection(h2_events& events, const h2_limits& limits);
  ~h2_connection();
  h2_connection(const h2_connection&) = delete;
  h2_connection& operator=(const h2_connection&) = delete;

  // Feeds bytes from the client. False when the connection must end (a
  // protocol error or a flood): take_output() then holds the GOAWAY to send.
  bool receive(std::string_view bytes, clock::time_point now = clock::now());
  // Appends the frames to send to `out`; false when there are none.
  bool take_output(std::string& out);
  // The connection is over once neither side has anything more to say.
  bool finished() const;

  // A response's head; `ends`: no body follows. Fields are sent as given
  // (names lower-cased); the caller leaves out hop-by-hop ones.
  bool respond(std::int32_t stream, unsigned status, const std::vector<std::pair<std::string, std::string>>& fields,
               bool ends);
  // Body bytes, buffered until flow control lets them out; `last` ends the stream.
  void send_data(std::int32_t stream, std::string_view bytes, bool last);
  // Bytes of the stream's response still buffered here.
  std::size_t buffered(std::int32_t stream) const;
  // gistproxy ends a stream for a reason of its own (the upstream failed, the
  // client stopped reading): not counted toward the reset limit.
  void reset(std::int32_t stream, std::uint32_t code);
  // The stream has not ended or been reset: a response can still reach it.
  bool open(std::int32_t stream) const { return incoming_.contains(stream); }
  // The session finished the work of a request it was handed (or dropped it
  // before it began): its slot is free once the stream has ended too.
  // Streams that hold a slot (open, or with work still running) are at most
  // max_concurrent_streams: past it a new stream is refused, so work that
  // outlives its stream (a reset) still counts until it is done.
  void work_done(std::int32_t stream);
  std::size_t slots_taken() const { return incoming_.size() + lingering_.size(); }
  // When the earliest request still arriving reaches its request time (the
  // session's timer calls expire() then); nullopt when none is arriving.
  std::optional<clock::time_point> next_deadline() const;
  void expire(clock::time_point now);
  // Ends the connection gracefully (the proxy drains): GOAWAY naming the last stream
  // taken, so the client opens no new one here; one it opened meanwhile is
  // refused (REFUSED_STREAM: never processed, safe to retry elsewhere). The
  // open streams finish; finished() is true once they have.
  void drain();

 private:
  struct incoming;
  // What the callbacks (h2_callbacks.cpp) step into; `frame_type` and
  // `flags` are the frame header's.
  int begin_stream(std::int32_t stream, bool request_head);
  void add_field(std::int32_t stream, bool request_head, std::string_view name, std::string_view value);
  void add_body(std::int32_t stream, std::string_view bytes);
  void frame_received(std::uint8_t frame_type, std::uint8_t flags, std::int32_t stream);
  void frame_sent(std::uint8_t frame_type, std::uint8_t flags, std::int32_t stream, std::uint32_t goaway_error);
  void stream_ended(std::int32_t stream, std::uint32_t code);
  long take_data(std::int32_t stream, std::uint8_t* buf, std::size_t length, std::uint32_t* flags);
  void refuse_head(incoming& in, h2_refusal why, std::string detail);
  struct outgoing {
    std::string bytes;
    std::size_t sent = 0;
    bool last = false, deferred = false;
  };
  friend struct h2_callbacks;
  void deliver(std::int32_t stream, incoming& in);
  void release(const incoming& in);  // its body no longer counts as arriving
  void count_reset();
  void answer_late_requests();
  void refuse_stream(std::int32_t stream, h2_refusal why);
  void advertise_stream_limit(std::string& out, std::size_t from);

  h2_events& events_;
  h2_limits limits_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<std::int32_t, std::unique_ptr<incoming>> incoming_;
  std::unordered_map<std::int32_t, outgoing> outgoing_;
  std::unordered_set<std::int32_t> working_;    // delivered, their work not done
  std::unordered_set<std::int32_t> lingering_;  // ended, their work not done
  std::unordered_set<std::int32_t> own_resets_;  // reset() by gistproxy: not counted
  std::deque<clock::time_point> resets_;
  std::uint64_t receiving_ = 0;  // body bytes of requests not yet delivered
  clock::time_point now_{};
  bool calm_ = false;     // GOAWAY ENHANCE_YOUR_CALM queued
  bool counted_ = false;  // this connection's refusal was told: one per connection
  bool advertised_ = false;  // the stream limit was written into the first SETTINGS
  std::optional<std::int32_t> last_taken_;  // set by drain(): streams above it are refused
};

}  // namespace gistproxy::proxy
