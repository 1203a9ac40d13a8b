#include "proxy/net/h2_connection.hpp"

#include <nghttp2/nghttp2.h>

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
}  // namespace

std::string_view h2_refusal_name(h2_refusal r) {
  switch (r) {
    case h2_refusal::rapid_reset: return "rapid_reset";
    case h2_refusal::flood: return "flood";
    case h2_refusal::header_list: return "header_list";
    case h2_refusal::protocol: return "protocol";
    case h2_refusal::body_budget: return "body_budget";
  }
  return "protocol";
}

struct h2_connection::incoming {
  std::string method, path, authority;
  http::request<http::string_body> request;
  std::size_t header_bytes = 0;
  h2_connection::clock::time_point began;
  bool headers_done = false;  // the header block is complete: a response may be sent
  bool delivered = false;
  std::optional<proxy_error> refusal;
};

// nghttp2's callbacks, each a thin step into the connection.
struct h2_callbacks {
  static h2_connection& self(void* user) { return *static_cast<h2_connection*>(user); }

  static int begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    auto& c = self(user);
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    // Opened after the draining GOAWAY was queued, before it went out (nghttp2
    // ignores such streams only once it is sent): refused, never assembled.
    if (c.last_taken_ && frame->hd.stream_id > *c.last_taken_) {
      nghttp2_submit_rst_stream(c.session_, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_REFUSED_STREAM);
      return 0;
    }
    (c.incoming_[frame->hd.stream_id] = std::make_unique<h2_connection::incoming>())->began = c.now_;
    return 0;
  }

  static int header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t name_length,
                    const std::uint8_t* value, std::size_t value_length, std::uint8_t, void* user) {
    auto& c = self(user);
    auto it = c.incoming_.find(frame->hd.stream_id);
    if (it == c.incoming_.end()) return 0;
    auto& in = *it->second;
    in.header_bytes += name_length + value_length + field_overhead;  // trailers count too
    if (in.header_bytes > c.limits_.max_header_list) {
      c.events_.refused(h2_refusal::header_list);
      return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // resets this stream only
    }
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;  // trailers: not headers
    const std::string_view n(reinterpret_cast<const char*>(name), name_length);
    const std::string_view v(reinterpret_cast<const char*>(value), value_length);
    if (n == ":method") in.method = v;
    else if (n == ":path") in.path = v;
    else if (n == ":authority") in.authority = v;
    else if (n.starts_with(':')) return 0;  // :scheme (nghttp2 checked it), :protocol (no CONNECT here)
    else if (auto cookie = in.request.find(http::field::cookie); n == "cookie" && cookie != in.request.end())
      in.request.set(http::field::cookie, std::string(cookie->value()) + "; " + std::string(v));  // RFC 9113 §8.2.3
    else in.request.insert(n, v);
    return 0;
  }

  static int data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
                        std::size_t length, void* user) {
    auto& c = self(user);
    auto it = c.incoming_.find(stream);
    if (it == c.incoming_.end() || it->second->delivered) return 0;  // already answered: the rest is dropped
    auto& body = it->second->request.body();
    if (body.size() + length > c.limits_.max_body) {
      it->second->refusal = proxy_error{error_kind::body_too_large, "request body exceeds the limit of " +
                                                                         std::to_string(c.limits_.max_body) + " bytes"};
      c.release(*it->second);
      body.clear();
      c.deliver(stream, *it->second);
      return 0;
    }
    if (c.receiving_ + length > c.limits_.max_receiving) {
      // The connection's bodies in flight are over budget: this stream is
      // refused (REFUSED_STREAM: nothing was processed, the client may retry).
      c.release(*it->second);
      body.clear();
      it->second->delivered = true;  // the rest of it is dropped
      nghttp2_submit_rst_stream(c.session_, NGHTTP2_FLAG_NONE, stream, NGHTTP2_REFUSED_STREAM);
      c.events_.refused(h2_refusal::body_budget);
      return 0;
    }
    body.append(reinterpret_cast<const char*>(data), length);
    c.receiving_ += length;
    return 0;
  }

  static int frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    auto& c = self(user);
    if (frame->hd.type == NGHTTP2_RST_STREAM) c.count_reset(c.now_);
    if (frame->hd.type == NGHTTP2_HEADERS)
      if (auto it = c.incoming_.find(frame->hd.stream_id); it != c.incoming_.end()) it->second->headers_done = true;
    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
      return 0;
    auto it = c.incoming_.find(frame->hd.stream_id);
    if (it != c.incoming_.end() && !it->second->delivered) c.deliver(frame->hd.stream_id, *it->second);
    return 0;
  }

  // A GOAWAY with an error the session did not choose itself (a malformed
  // frame, a broken header block) is a protocol refusal.
  static int frame_send(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    auto& c = self(user);
    if (frame->hd.type != NGHTTP2_GOAWAY || frame->goaway.error_code == NGHTTP2_NO_ERROR || c.counted_) return 0;
    c.counted_ = true;
    c.events_.refused(h2_refusal::protocol);
    return 0;
  }

  static int stream_close(nghttp2_session*, std::int32_t stream, std::uint32_t code, void* user) {
    auto& c = self(user);
    if (auto it = c.incoming_.find(stream); it != c.incoming_.end()) {
      if (!it->second->delivered) c.release(*it->second);
      c.incoming_.erase(it);
    }
    c.outgoing_.erase(stream);
    c.events_.stream_closed(stream, code);
    return 0;
  }

  static ssize_t read_data(nghttp2_session*, std::int32_t stream, std::uint8_t* buf, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source*, void* user) {
    auto& c = self(user);
    auto it = c.outgoing_.find(stream);
    if (it == c.outgoing_.end()) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
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
    if (n) c.events_.drained(stream);
    return ssize_t(n);
  }
};

h2_connection::h2_connection(h2_events& events, const h2_limits& limits) : events_(events), limits_(limits) {
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, h2_callbacks::begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cb, h2_callbacks::header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2_callbacks::data_chunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, h2_callbacks::frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2_callbacks::stream_close);
  nghttp2_session_callbacks_set_on_frame_send_callback(cb, h2_callbacks::frame_send);
  nghttp2_option* opt = nullptr;
  nghttp2_option_new(&opt);
  // The floods nghttp2 bounds itself, at explicit values: queued SETTINGS
  // and PING acknowledgements a client does not read (SETTINGS/PING
  // floods), entries per SETTINGS frame, CONTINUATION frames per header block.
  nghttp2_option_set_max_outbound_ack(opt, 1000);
  nghttp2_option_set_max_settings(opt, 32);
  nghttp2_option_set_max_continuations(opt, 8);
  nghttp2_session_server_new2(&session_, cb, this, opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, limits_.max_concurrent_streams},
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
    if (!counted_) events_.refused(flood ? h2_refusal::flood : h2_refusal::protocol);
    counted_ = true;
    nghttp2_session_terminate_session(session_, NGHTTP2_PROTOCOL_ERROR);
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
  return out.size() > before;
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
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, code);
}

void h2_connection::drain() {
  if (last_taken_) return;
  last_taken_ = nghttp2_session_get_last_proc_stream_id(session_);
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, *last_taken_, NGHTTP2_NO_ERROR, nullptr, 0);
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
  if (!in.authority.empty() && r.request.find(http::field::host) == r.request.end())
    r.request.set(http::field::host, in.authority);
  events_.request_ready(std::move(r));
}

void h2_connection::count_reset(clock::time_point now) {
  if (calm_) return;
  resets_.push_back(now);
  while (!resets_.empty() && now - resets_.front() > limits_.reset_window) resets_.pop_front();
  if (resets_.size() <= limits_.max_resets) return;
  calm_ = true;
  counted_ = true;
  resets_.clear();
  nghttp2_session_terminate_session(session_, NGHTTP2_ENHANCE_YOUR_CALM);
  events_.refused(h2_refusal::rapid_reset);
}

}  // namespace gistproxy::proxy
