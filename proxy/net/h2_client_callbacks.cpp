// nghttp2's callbacks into h2_client_connection. Each is noexcept and
// reports a failure nghttp2's way, as the server side's do
// (h2_callbacks.cpp): a C++ exception unwinding through nghttp2's C frames
// is undefined behaviour. A callback about one stream that throws resets
// that stream only; one about the connection ends the connection.
#include "proxy/net/h2_client_internals.hpp"

namespace gistproxy::proxy {

namespace {
h2_client_connection& self(void* user) { return *static_cast<h2_client_connection*>(user); }
}  // namespace

// The one place a callback's exception stops. `stream_error`: what nghttp2
// is told when the callback concerns `stream` (0: the connection's own); 0
// there: the stream is reset here and nghttp2 goes on.
template <class Step>
int h2_client_callbacks::guarded(void* user, std::int32_t stream, int stream_error, Step&& step) noexcept {
  try {
    return step(self(user));
  } catch (...) {
    auto& c = self(user);
    c.events_.callback_failed();
    if (stream <= 0) return NGHTTP2_ERR_CALLBACK_FAILURE;  // nghttp2 ends the connection
    if (auto it = c.streams_.find(stream); it != c.streams_.end() && !it->second->failure)
      it->second->failure = h2_client_failure::internal;
    if (stream_error == 0) nghttp2_submit_rst_stream(c.session_, NGHTTP2_FLAG_NONE, stream, NGHTTP2_INTERNAL_ERROR);
    return stream_error;
  }
}

int h2_client_callbacks::header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                                std::size_t name_length, const std::uint8_t* value, std::size_t value_length,
                                std::uint8_t, void* user) noexcept {
  return guarded(user, frame->hd.stream_id, NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE, [&](h2_client_connection& c) {
    return c.add_field(frame->hd.stream_id, std::string_view(reinterpret_cast<const char*>(name), name_length),
                       std::string_view(reinterpret_cast<const char*>(value), value_length));
  });
}

int h2_client_callbacks::data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
                                    std::size_t length, void* user) noexcept {
  return guarded(user, stream, 0, [&](h2_client_connection& c) {
    c.add_body(stream, std::string_view(reinterpret_cast<const char*>(data), length));
    return 0;
  });
}

int h2_client_callbacks::frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) noexcept {
  // A stream's frame (its head complete, its end) is that stream's; a
  // GOAWAY or SETTINGS is the connection's.
  return guarded(user, frame->hd.stream_id, 0, [&](h2_client_connection& c) {
    c.frame_received(frame->hd.type, frame->hd.flags, frame->hd.stream_id,
                     frame->hd.type == NGHTTP2_GOAWAY ? frame->goaway.error_code : 0);
    return 0;
  });
}

int h2_client_callbacks::frame_not_send(nghttp2_session*, const nghttp2_frame* frame, int, void* user) noexcept {
  return guarded(user, 0, 0, [&](h2_client_connection& c) {
    if (frame->hd.type == NGHTTP2_HEADERS) c.request_not_sent(frame->hd.stream_id);
    return 0;
  });
}

int h2_client_callbacks::stream_close(nghttp2_session*, std::int32_t stream, std::uint32_t code, void* user) noexcept {
  // The stream is gone whatever happens here: nothing left to reset.
  return guarded(user, 0, 0, [&](h2_client_connection& c) {
    c.stream_ended(stream, code);
    return 0;
  });
}

ssize_t h2_client_callbacks::read_data(nghttp2_session*, std::int32_t stream, std::uint8_t* buf, std::size_t length,
                                       std::uint32_t* flags, nghttp2_data_source*, void* user) noexcept {
  // TEMPORAL_CALLBACK_FAILURE: nghttp2 resets this stream (INTERNAL_ERROR).
  return guarded(user, stream, NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE, [&](h2_client_connection& c) -> int {
    return static_cast<int>(c.take_data(stream, buf, length, flags));
  });
}

void h2_client_callbacks::install(nghttp2_session_callbacks* cb) {
  nghttp2_session_callbacks_set_on_header_callback(cb, header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, data_chunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, stream_close);
  nghttp2_session_callbacks_set_on_frame_not_send_callback(cb, frame_not_send);
}

}  // namespace gistproxy::proxy
