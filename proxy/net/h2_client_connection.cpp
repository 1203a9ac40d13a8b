#include "proxy/net/h2_client_connection.hpp"

#include <algorithm>
#include <cstring>

#include "proxy/net/h2_client_internals.hpp"

namespace gistproxy::proxy {

namespace {
// One take of output at most this big: a write stays bounded while streams
// with open windows have much buffered.
constexpr std::size_t output_per_take = 256 * 1024;
nghttp2_nv field(std::string_view n, std::string_view v) {
  return nghttp2_nv{reinterpret_cast<std::uint8_t*>(const_cast<char*>(n.data())),
                    reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), n.size(), v.size(),
                    NGHTTP2_NV_FLAG_NONE};  // nghttp2 copies names and values
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}
}  // namespace

std::string_view h2_client_failure_name(h2_client_failure f) {
  switch (f) {
    case h2_client_failure::reset: return "reset";
    case h2_client_failure::refused: return "refused";
    case h2_client_failure::header_list: return "header_list";
    case h2_client_failure::connection: return "connection";
    case h2_client_failure::internal: return "internal";
  }
  return "internal";
}

h2_client_connection::h2_client_connection(h2_client_events& events, const h2_client_limits& limits)
    : events_(events), limits_(limits) {
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  h2_client_callbacks::install(cb);
  nghttp2_option* opt = nullptr;
  nghttp2_option_new(&opt);
  // The windows reopen as the caller consumes (consumed()), not as bytes
  // arrive: an upstream faster than the client cannot fill memory here.
  nghttp2_option_set_no_auto_window_update(opt, 1);
  // The floods nghttp2 bounds itself, at the server side's values.
  nghttp2_option_set_max_outbound_ack(opt, 1000);
  nghttp2_option_set_max_settings(opt, 32);
  nghttp2_option_set_max_continuations(opt, 8);
  nghttp2_option_set_no_closed_streams(opt, 1);
  // A request head the server side accepted (256 KiB decoded) must fit once
  // encoded: nghttp2 sends none over 64 KiB unless told.
  nghttp2_option_set_max_send_header_block_length(opt, 4 * std::size_t(limits_.max_header_list));
  nghttp2_session_client_new2(&session_, cb, this, opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, limits_.stream_window},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, limits_.max_header_list},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, std::int32_t(limits_.connection_window));
}

h2_client_connection::~h2_client_connection() { nghttp2_session_del(session_); }

bool h2_client_connection::receive(std::string_view bytes) {
  const auto n = nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  if (n < 0) {
    const auto code = n == NGHTTP2_ERR_CALLBACK_FAILURE ? NGHTTP2_INTERNAL_ERROR : NGHTTP2_PROTOCOL_ERROR;
    nghttp2_session_terminate_session(session_, code);
    end_connection(code);
    fail_all(h2_client_failure::connection);
    return false;
  }
  if (nghttp2_session_want_read(session_)) return true;
  // nghttp2 ended the connection itself (a malformed frame: its GOAWAY is
  // queued), or a GOAWAY came and no stream is left.
  end_connection(NGHTTP2_PROTOCOL_ERROR);
  fail_all(h2_client_failure::connection);
  return false;
}

bool h2_client_connection::take_output(std::string& out) {
  const std::size_t before = out.size();
  while (out.size() - before < output_per_take) {
    const std::uint8_t* data = nullptr;
    const auto n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) {  // fatal (memory, a callback of the connection's): the session is unusable
      end_connection(NGHTTP2_INTERNAL_ERROR);
      fail_all(h2_client_failure::connection);
      break;
    }
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(data), std::size_t(n));
  }
  return out.size() > before;
}

bool h2_client_connection::finished() const {
  return !nghttp2_session_want_read(session_) && !nghttp2_session_want_write(session_);
}

void h2_client_connection::connection_lost() {
  end_connection(NGHTTP2_INTERNAL_ERROR);
  fail_all(h2_client_failure::connection);  // nothing more can reach them
}

void h2_client_connection::end_connection(std::uint32_t code) {
  if (ended_) return;
  ended_ = true;
  events_.connection_ended(code);
}

// The map is taken first: an event may call back in (reset, submit).
void h2_client_connection::fail_all(h2_client_failure why) {
  auto open = std::move(streams_);
  streams_.clear();
  for (auto& [stream, s] : open)
    if (!s->cancelled && !s->response_ended) events_.stream_failed(stream, why, NGHTTP2_INTERNAL_ERROR);
}

bool h2_client_connection::can_submit() const {
  const std::uint64_t upstream_limit =
      nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
  return !ended_ && streams_.size() < std::min<std::uint64_t>(limits_.max_streams, upstream_limit) &&
         nghttp2_session_check_request_allowed(session_);
}

std::optional<std::int32_t> h2_client_connection::submit(const h2_client_request& r, std::string body, bool last) {
  if (!can_submit()) return std::nullopt;
  std::vector<std::string> names;
  names.reserve(r.fields.size());
  std::vector<nghttp2_nv> nva{field(":method", r.method), field(":scheme", r.scheme),
                              field(":authority", r.authority), field(":path", r.path)};
  for (const auto& [n, v] : r.fields) {
    if (n.empty() || n.front() == ':') return std::nullopt;  // a pseudo-field among the fields: malformed
    nva.push_back(field(names.emplace_back(lower(n)), v));
  }
  auto state = std::make_unique<stream_state>();
  state->body = std::move(body);
  state->last = last;
  const bool has_body = !state->body.empty() || !last;
  nghttp2_data_provider provider{};
  provider.read_callback = h2_client_callbacks::read_data;
  const std::int32_t id =
      nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(), has_body ? &provider : nullptr, nullptr);
  if (id <= 0) return std::nullopt;
  streams_[id] = std::move(state);
  return id;
}

bool h2_client_connection::send_data(std::int32_t stream, std::string_view bytes, bool last) {
  auto it = streams_.find(stream);
  if (it == streams_.end()) return false;
  auto& s = *it->second;
  if (s.last || s.cancelled || s.failure || s.response_ended) return false;
  if (s.sent > 0 && s.sent * 2 >= s.body.size()) {  // what went out is dropped before the buffer grows
    s.body.erase(0, s.sent);
    s.sent = 0;
  }
  if (s.body.size() - s.sent + bytes.size() > limits_.max_send_buffered) return false;
  s.body.append(bytes);
  s.last = last;
  if (s.deferred) {
    s.deferred = false;
    nghttp2_session_resume_data(session_, stream);
  }
  return true;
}

std::size_t h2_client_connection::buffered(std::int32_t stream) const {
  auto it = streams_.find(stream);
  return it == streams_.end() ? 0 : it->second->body.size() - it->second->sent;
}

void h2_client_connection::consumed(std::int32_t stream, std::size_t bytes) {
  auto it = streams_.find(stream);
  if (it == streams_.end()) return;  // closed: its bytes were given back then
  const auto n = std::min<std::uint64_t>(bytes, it->second->unconsumed);
  it->second->unconsumed -= n;
  if (n) nghttp2_session_consume(session_, stream, std::size_t(n));
}

void h2_client_connection::reset(std::int32_t stream, std::uint32_t code) {
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second->cancelled) return;
  it->second->cancelled = true;
  it->second->body.clear();
  it->second->sent = 0;
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, code);
}

}  // namespace gistproxy::proxy
