// h2_client_connection's steps for one stream, as its nghttp2 callbacks
// (h2_client_callbacks.cpp) meet them: the response head assembled within
// its bound, body pieces handed over, the stream's end told once.
#include <cstring>

#include "proxy/net/checked_parser.hpp"
#include "proxy/net/h2_client_internals.hpp"

namespace gistproxy::proxy {

namespace {
constexpr std::size_t field_overhead = 32;  // RFC 9113 §6.5.2

unsigned status_of(std::string_view v) {  // nghttp2 checked: three digits
  unsigned status = 0;
  for (char c : v) status = status * 10 + unsigned(c - '0');
  return status;
}
}  // namespace

// A head over the bound fails its stream: nghttp2 resets it (INTERNAL_ERROR)
// and decodes the rest of the block without calling here (HPACK's table
// stays in step).
int h2_client_connection::add_field(std::int32_t stream, std::string_view n, std::string_view v) {
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second->cancelled || it->second->failure) return 0;
  auto& s = *it->second;
  s.header_bytes += n.size() + v.size() + field_overhead;  // trailers count too
  if (s.header_bytes > limits_.max_header_list || !field_fits(n.size(), v.size())) {
    s.failure = h2_client_failure::header_list;
    s.fields.clear();
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  }
  if (s.head_delivered) return 0;  // trailers: counted, not kept
  if (n == ":status") s.status = status_of(v);
  else if (!n.starts_with(':')) s.fields.emplace_back(n, v);
  return 0;
}

void h2_client_connection::add_body(std::int32_t stream, std::string_view bytes) {
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second->cancelled || it->second->failure) {
    nghttp2_session_consume(session_, stream, bytes.size());  // nobody reads it: its window reopens at once
    return;
  }
  it->second->unconsumed += bytes.size();
  events_.response_data(stream, bytes);
}

void h2_client_connection::frame_received(std::uint8_t frame_type, std::uint8_t flags, std::int32_t stream,
                                          std::uint32_t goaway_error) {
  // The streams above the GOAWAY's last one nghttp2 closes (REFUSED_STREAM).
  if (frame_type == NGHTTP2_GOAWAY) return end_connection(goaway_error);
  if (frame_type != NGHTTP2_HEADERS && frame_type != NGHTTP2_DATA) return;
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second->cancelled || it->second->failure) return;
  auto& s = *it->second;
  if (frame_type == NGHTTP2_HEADERS && !s.head_delivered) head_complete(stream, s);
  if (!(flags & NGHTTP2_FLAG_END_STREAM) || !s.head_delivered || s.response_ended) return;
  s.response_ended = true;
  events_.response_end(stream);
}

// A 1xx head is informational (100-continue, 103): the final one follows.
void h2_client_connection::head_complete(std::int32_t stream, stream_state& s) {
  if (s.status < 200) {
    s.status = 0;
    s.fields.clear();
    s.header_bytes = 0;
    return;
  }
  s.head_delivered = true;
  events_.response_head(stream, s.status, std::move(s.fields));
  s.fields.clear();
}

// The request's HEADERS never went out (a GOAWAY came first, or the head
// is over nghttp2's bound): nothing reached the upstream.
void h2_client_connection::request_not_sent(std::int32_t stream) {
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  auto s = std::move(it->second);
  streams_.erase(it);
  if (!s->cancelled) events_.stream_failed(stream, h2_client_failure::refused, NGHTTP2_REFUSED_STREAM);
}

void h2_client_connection::stream_ended(std::int32_t stream, std::uint32_t code) {
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  auto s = std::move(it->second);
  streams_.erase(it);
  // What the caller never consumed no longer holds the connection's window.
  if (s->unconsumed) nghttp2_session_consume_connection(session_, std::size_t(s->unconsumed));
  if (s->cancelled || s->response_ended) return;
  const auto why = s->failure                       ? *s->failure
                   : code == NGHTTP2_REFUSED_STREAM ? h2_client_failure::refused
                                                    : h2_client_failure::reset;
  events_.stream_failed(stream, why, code);
}

long h2_client_connection::take_data(std::int32_t stream, std::uint8_t* buf, std::size_t length, std::uint32_t* flags) {
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second->cancelled) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  auto& s = *it->second;
  const std::size_t n = std::min(length, s.body.size() - s.sent);
  if (n) std::memcpy(buf, s.body.data() + s.sent, n);
  s.sent += n;
  if (s.sent == s.body.size()) {
    s.body.clear();
    s.sent = 0;
    if (s.last) *flags |= NGHTTP2_DATA_FLAG_EOF;
    else if (n == 0) {
      s.deferred = true;  // send_data resumes it
      return NGHTTP2_ERR_DEFERRED;
    }
  }
  if (n) events_.drained(stream);
  return long(n);
}

}  // namespace gistproxy::proxy
