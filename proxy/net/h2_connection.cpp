#include "proxy/net/h2_connection.hpp"

#include "proxy/net/checked_parser.hpp"
#include "proxy/net/h2_internals.hpp"

#include <algorithm>
#include <cstring>

#include "proxy/net/request_target.hpp"

namespace gistproxy::proxy {

namespace http = boost::beast::http;

namespace {
// One take of output at most this big: a write stays bounded while streams
// with open windows have much buffered.
constexpr std::size_t output_per_take = 256 * 1024;
// Per-field overhead in the header list size (RFC 9113 §6.5.2).
constexpr std::size_t field_overhead = 32;
constexpr std::uint32_t connection_window = 16u << 20;
// nghttp2 answers a stream beyond the acknowledged limit with a connection
// error (GOAWAY), losing the streams in flight; RFC 9113 §5.1.2 asks for
// REFUSED_STREAM on the excess. So nghttp2 is told no limit (this, its
// default) and the SETTINGS frame on the wire carries the real one
// (advertise_stream_limit); h2_connection refuses the excess itself.
constexpr std::uint32_t no_stream_limit = 0xffffffffu;
constexpr std::size_t frame_header = 9, settings_entry = 6;
}  // namespace

std::string_view h2_refusal_name(h2_refusal r) {
  switch (r) {
    case h2_refusal::rapid_reset: return "rapid_reset";
    case h2_refusal::flood: return "flood";
    case h2_refusal::header_list: return "header_list";
    case h2_refusal::field_size: return "field_size";
    case h2_refusal::stream_limit: return "stream_limit";
    case h2_refusal::protocol: return "protocol";
    case h2_refusal::body_budget: return "body_budget";
  }
  return "protocol";
}

// A stream opens: it takes a slot, unless the connection's slots are all
// taken (open streams, and reset ones whose work still runs): then it is
// refused before anything of it is assembled.
int h2_connection::begin_stream(std::int32_t stream, bool request_head) {
  if (!request_head) return 0;
  // Opened after the draining GOAWAY was queued, before it went out (nghttp2
  // ignores such streams only once it is sent): refused, never assembled.
  if (last_taken_ && stream > *last_taken_) {
    own_resets_.insert(stream);  // the client could not know: not a flood
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, NGHTTP2_REFUSED_STREAM);
    return 0;
  }
  // RFC 9113 §5.1.2: beyond the limit, REFUSED_STREAM (never processed, safe
  // to retry); the streams in flight go on.
  if (slots_taken() >= limits_.max_concurrent_streams) {
    refuse_stream(stream, h2_refusal::stream_limit);
    return 0;
  }
  (incoming_[stream] = std::make_unique<incoming>())->began = now_;
  return 0;
}

void h2_connection::refuse_stream(std::int32_t stream, h2_refusal why) {
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, NGHTTP2_REFUSED_STREAM);
  events_.refused(why);
}

// A head over a limit is answered 431 once it is complete; its other fields
// are still decoded (HPACK's table must stay in step) but dropped.
void h2_connection::refuse_head(incoming& in, h2_refusal why, std::string detail) {
  in.refusal = proxy_error{error_kind::headers_too_large, std::move(detail)};
  in.request = {};
  events_.refused(why);
}

void h2_connection::add_field(std::int32_t stream, bool request_head, std::string_view n, std::string_view v) {
  auto it = incoming_.find(stream);
  if (it == incoming_.end() || it->second->delivered) return;
  auto& in = *it->second;
  if (in.refusal) return;
  in.header_bytes += n.size() + v.size() + field_overhead;  // trailers count too
  if (in.header_bytes > limits_.max_header_list)
    return refuse_head(in, h2_refusal::header_list,
                       "request header list over the limit of " + std::to_string(limits_.max_header_list) + " bytes");
  // The cookie crumbs are joined into one field (RFC 9113 §8.2.3): the
  // joined field is what must fit.
  auto cookie = in.request.find(http::field::cookie);
  const bool joins = n == "cookie" && cookie != in.request.end();
  const std::size_t value_bytes = joins ? cookie->value().size() + 2 + v.size() : v.size();
  if (!field_fits(n.size(), value_bytes))
    return refuse_head(in, h2_refusal::field_size,
                       "a request header field over the limit of " + std::to_string(max_field_bytes) + " bytes");
  if (!request_head) return;  // trailers: not headers
  if (n == ":method") in.method = v;
  else if (n == ":path") in.path = v;
  else if (n == ":authority") in.authority = v;
  else if (n == ":scheme") in.scheme = v;
  else if (n.starts_with(':')) return;  // :scheme (nghttp2 checked it), :protocol (no CONNECT here)
  else if (joins) in.request.set(http::field::cookie, std::string(cookie->value()) + "; " + std::string(v));
  else in.request.insert(n, v);
}

void h2_connection::add_body(std::int32_t stream, std::string_view bytes) {
  auto it = incoming_.find(stream);
  if (it == incoming_.end() || it->second->delivered) return;  // already answered: the rest is dropped
  auto& in = *it->second;
  auto& body = in.request.body();
  if (body.size() + bytes.size() > limits_.max_body) {
    in.refusal = proxy_error{error_kind::body_too_large,
                             "request body exceeds the limit of " + std::to_string(limits_.max_body) + " bytes"};
    release(in);
    body.clear();
    deliver(stream, in);
    return;
  }
  if (receiving_ + bytes.size() > limits_.max_receiving) {
    // The connection's bodies in flight are over budget: this stream is
    // refused (REFUSED_STREAM: nothing was processed, the client may retry).
    release(in);
    body.clear();
    in.delivered = true;  // the rest of it is dropped
    refuse_stream(stream, h2_refusal::body_budget);
    return;
  }
  body.append(bytes);
  receiving_ += bytes.size();
}

void h2_connection::frame_received(std::uint8_t frame_type, std::uint8_t flags, std::int32_t stream) {
  if (frame_type == NGHTTP2_RST_STREAM) count_reset();
  if (frame_type != NGHTTP2_HEADERS && frame_type != NGHTTP2_DATA) return;
  auto it = incoming_.find(stream);
  if (it == incoming_.end()) return;
  auto& in = *it->second;
  if (flags & NGHTTP2_FLAG_END_STREAM) in.client_done = true;
  if (in.delivered) return;
  if (frame_type == NGHTTP2_HEADERS) in.headers_done = true;
  // A refused head is answered at once; a request, once it is whole.
  if ((frame_type == NGHTTP2_HEADERS && in.refusal) || (flags & NGHTTP2_FLAG_END_STREAM)) deliver(stream, in);
}

// Every reset the connection sends counts toward the limit but those
// gistproxy chose (reset()): the ones a client provokes (MadeYouReset: a
// WINDOW_UPDATE overflow, a frame on a half-closed stream) and streams
// refused at the limit. A GOAWAY with an error the session did not choose
// itself (a malformed frame, a broken header block) is a protocol refusal.
void h2_connection::frame_sent(std::uint8_t frame_type, std::uint8_t flags, std::int32_t stream,
                               std::uint32_t goaway_error) {
  if (frame_type == NGHTTP2_RST_STREAM && own_resets_.erase(stream) == 0) count_reset();
  // A whole answer (a 408, 413 or 431) went out before the client finished
  // sending: it is told to stop (RFC 9113 §8.1, RST_STREAM NO_ERROR), and the
  // stream ends here instead of holding its slot until the client ends it.
  if ((frame_type == NGHTTP2_HEADERS || frame_type == NGHTTP2_DATA) && (flags & NGHTTP2_FLAG_END_STREAM))
    if (auto it = incoming_.find(stream); it != incoming_.end() && !it->second->client_done) {
      own_resets_.insert(stream);
      nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, NGHTTP2_NO_ERROR);
    }
  if (frame_type != NGHTTP2_GOAWAY || goaway_error == NGHTTP2_NO_ERROR || counted_) return;
  counted_ = true;
  events_.refused(h2_refusal::protocol);
}

void h2_connection::stream_ended(std::int32_t stream, std::uint32_t code) {
  if (auto it = incoming_.find(stream); it != incoming_.end()) {
    if (!it->second->delivered) release(*it->second);
    incoming_.erase(it);
  }
  outgoing_.erase(stream);  // its answer is freed at once
  own_resets_.erase(stream);
  if (working_.contains(stream)) lingering_.insert(stream);  // its slot stays taken until the work is done
  events_.stream_closed(stream, code);
}

void h2_connection::work_done(std::int32_t stream) {
  working_.erase(stream);
  lingering_.erase(stream);
}

long h2_connection::take_data(std::int32_t stream, std::uint8_t* buf, std::size_t length, std::uint32_t* flags) {
  auto it = outgoing_.find(stream);
  if (it == outgoing_.end()) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  auto& o = it->second;
  const std::size_t n = std::min(length, o.bytes.size() - o.sent);
  if (n) std::memcpy(buf, o.bytes.data() + o.sent, n);
  o.sent += n;
  if (o.sent == o.bytes.size()) {
    o.bytes.clear();
    o.sent = 0;
    if (o.last) *flags |= NGHTTP2_DATA_FLAG_EOF;
    else if (n == 0) {
      o.deferred = true;  // send_data resumes it
      return NGHTTP2_ERR_DEFERRED;
    }
  }
  if (n) events_.drained(stream);
  return long(n);
}

h2_connection::h2_connection(h2_events& events, const h2_limits& limits) : events_(events), limits_(limits) {
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  h2_callbacks::install(cb);
  nghttp2_option* opt = nullptr;
  nghttp2_option_new(&opt);
  // The floods nghttp2 bounds itself, at explicit values: queued SETTINGS
  // and PING acknowledgements a client does not read (SETTINGS/PING
  // floods), entries per SETTINGS frame, CONTINUATION frames per header block.
  nghttp2_option_set_max_outbound_ack(opt, 1000);
  nghttp2_option_set_max_settings(opt, 32);
  nghttp2_option_set_max_continuations(opt, 8);
  // Closed streams are not kept for priorities (RFC 9113 deprecated them):
  // with no limit of nghttp2's own, nothing else would bound them.
  nghttp2_option_set_no_closed_streams(opt, 1);
  nghttp2_session_server_new2(&session_, cb, this, opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, no_stream_limit},  // the wire says max_concurrent_streams
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, limits_.max_header_list},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, limits_.initial_window},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, connection_window);
}

h2_connection::~h2_connection() { nghttp2_session_del(session_); }

bool h2_connection::receive(std::string_view bytes, clock::time_point now) {
  now_ = now;
  const auto n = nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  if (n < 0) {
    const bool flood = n == NGHTTP2_ERR_FLOODED || n == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS;
    const bool ours = n == NGHTTP2_ERR_CALLBACK_FAILURE;  // told as callback_failed()
    if (!counted_ && !ours) events_.refused(flood ? h2_refusal::flood : h2_refusal::protocol);
    counted_ = true;
    nghttp2_session_terminate_session(session_, ours ? NGHTTP2_INTERNAL_ERROR : NGHTTP2_PROTOCOL_ERROR);
    return false;
  }
  answer_late_requests();
  // nghttp2 stops reading once it ended the connection (a GOAWAY is queued).
  return !calm_ && nghttp2_session_want_read(session_);
}

bool h2_connection::take_output(std::string& out) {
  const std::size_t before = out.size();
  while (out.size() - before < output_per_take) {
    const std::uint8_t* data = nullptr;
    const auto n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) break;  // nothing more, or a fatal error (finished() then says so)
    out.append(reinterpret_cast<const char*>(data), std::size_t(n));
  }
  if (!advertised_) advertise_stream_limit(out, before);
  return out.size() > before;
}

// The connection's first frame is its SETTINGS (submitted first): its
// placeholder MAX_CONCURRENT_STREAMS entry becomes the real limit on the
// wire. Checked field by field; anything unexpected is left as it is (the
// client then sees no limit, and the excess is still refused).
void h2_connection::advertise_stream_limit(std::string& out, std::size_t from) {
  if (out.size() < from + frame_header) return;
  advertised_ = true;
  auto byte = [&](std::size_t at) { return static_cast<std::uint8_t>(out[at]); };
  const std::size_t length = (std::size_t(byte(from)) << 16) | (std::size_t(byte(from + 1)) << 8) | byte(from + 2);
  if (byte(from + 3) != NGHTTP2_SETTINGS || (byte(from + 4) & NGHTTP2_FLAG_ACK) ||
      out.size() < from + frame_header + length)
    return;
  for (std::size_t at = from + frame_header; at + settings_entry <= from + frame_header + length; at += settings_entry) {
    const unsigned id = (unsigned(byte(at)) << 8) | byte(at + 1);
    const std::uint32_t value = (std::uint32_t(byte(at + 2)) << 24) | (std::uint32_t(byte(at + 3)) << 16) |
                                (std::uint32_t(byte(at + 4)) << 8) | byte(at + 5);
    if (id != NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS || value != no_stream_limit) continue;
    const std::uint32_t limit = limits_.max_concurrent_streams;
    for (int i = 0; i < 4; ++i) out[at + 2 + i] = static_cast<char>((limit >> (24 - 8 * i)) & 0xff);
    return;
  }
}

bool h2_connection::finished() const {
  return !nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_);
}

bool h2_connection::respond(std::int32_t stream, unsigned status,
                            const std::vector<std::pair<std::string, std::string>>& fields, bool ends) {
  const std::string code = std::to_string(status);
  std::vector<nghttp2_nv> nva;
  nva.reserve(fields.size() + 1);
  auto nv = [](std::string_view n, std::string_view v) {
    return nghttp2_nv{reinterpret_cast<std::uint8_t*>(const_cast<char*>(n.data())),
                      reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), n.size(), v.size(),
                      NGHTTP2_NV_FLAG_NONE};  // nghttp2 copies names and values
  };
  nva.push_back(nv(":status", code));
  for (const auto& [n, v] : fields) nva.push_back(nv(n, v));
  nghttp2_data_provider provider{};
  provider.read_callback = h2_callbacks::read_data;
  // A stream that ended or was reset takes no answer: nothing is kept for it.
  if (!open(stream)) return false;
  if (!ends) outgoing_[stream];
  const int rv = nghttp2_submit_response(session_, stream, nva.data(), nva.size(), ends ? nullptr : &provider);
  if (rv != 0) outgoing_.erase(stream);
  return rv == 0;
}

void h2_connection::send_data(std::int32_t stream, std::string_view bytes, bool last) {
  auto it = outgoing_.find(stream);
  if (it == outgoing_.end()) return;  // closed (reset) meanwhile: nobody to send to
  auto& o = it->second;
  if (o.sent > 0 && o.sent * 2 >= o.bytes.size()) {  // what went out is dropped before the buffer grows
    o.bytes.erase(0, o.sent);
    o.sent = 0;
  }
  o.bytes.append(bytes);
  o.last = o.last || last;
  if (o.deferred) {
    o.deferred = false;
    nghttp2_session_resume_data(session_, stream);
  }
}

std::size_t h2_connection::buffered(std::int32_t stream) const {
  auto it = outgoing_.find(stream);
  return it == outgoing_.end() ? 0 : it->second.bytes.size() - it->second.sent;
}

void h2_connection::reset(std::int32_t stream, std::uint32_t code) {
  if (!open(stream)) return;
  own_resets_.insert(stream);
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, code);
}

void h2_connection::drain() {
  if (last_taken_) return;
  last_taken_ = nghttp2_session_get_last_proc_stream_id(session_);
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, *last_taken_, NGHTTP2_NO_ERROR, nullptr, 0);
}

std::optional<h2_connection::clock::time_point> h2_connection::next_deadline() const {
  std::optional<clock::time_point> next;
  for (const auto& [stream, in] : incoming_)
    if (!in->delivered && in->headers_done && (!next || in->began + limits_.request_time < *next))
      next = in->began + limits_.request_time;
  return next;
}

void h2_connection::expire(clock::time_point now) {
  now_ = now;
  answer_late_requests();
}

// At most max_concurrent_streams entries: walked on each read.
void h2_connection::answer_late_requests() {
  for (auto& [stream, in] : incoming_) {
    if (in->delivered || !in->headers_done || now_ - in->began < limits_.request_time) continue;
    in->refusal = proxy_error{error_kind::request_timeout, "request body not received in time"};
    release(*in);
    in->request.body().clear();
    deliver(stream, *in);  // the rest of it is dropped
  }
}

void h2_connection::release(const incoming& in) { receiving_ -= std::min<std::uint64_t>(receiving_, in.request.body().size()); }

void h2_connection::deliver(std::int32_t stream, incoming& in) {
  release(in);
  in.delivered = true;
  working_.insert(stream);  // its slot is held until the session says the work is done
  h2_request r;
  r.stream = stream;
  r.request = std::move(in.request);
  r.refusal = std::move(in.refusal);
  r.request.version(20);
  const auto verb = http::string_to_verb(in.method);
  if (verb == http::verb::unknown) r.request.method_string(in.method);
  else r.request.method(verb);
  if (!r.refusal) {
    auto checked = check_request_target(in.method, in.path);
    if (!checked.error.empty()) r.refusal = proxy_error{error_kind::bad_request, checked.error};
    else if (checked.asterisk) r.refusal = proxy_error{error_kind::bad_request, "OPTIONS * is not served over HTTP/2"};
    else r.request.target(checked.origin_form);
  }
  r.pseudo.host_from_authority = !in.authority.empty() && r.request.find(http::field::host) == r.request.end();
  if (r.pseudo.host_from_authority) r.request.set(http::field::host, in.authority);
  r.pseudo.scheme = std::move(in.scheme);
  r.pseudo.authority = std::move(in.authority);
  r.pseudo.path = std::move(in.path);
  events_.request_ready(std::move(r));
}

void h2_connection::count_reset() {
  if (calm_) return;
  resets_.push_back(now_);
  while (!resets_.empty() && now_ - resets_.front() > limits_.reset_window) resets_.pop_front();
  if (resets_.size() <= limits_.max_resets) return;
  calm_ = true;
  counted_ = true;
  resets_.clear();
  nghttp2_session_terminate_session(session_, NGHTTP2_ENHANCE_YOUR_CALM);
  events_.refused(h2_refusal::rapid_reset);
}

}  // namespace gistproxy::proxy
