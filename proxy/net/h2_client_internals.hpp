// What h2_client_connection.cpp and h2_client_callbacks.cpp share, and
// nothing else uses: one stream's state, and the callbacks' entry points.
#pragma once

#include <nghttp2/nghttp2.h>

#include "proxy/net/h2_client_connection.hpp"

namespace gistproxy::proxy {

struct h2_client_connection::stream_state {
  // The response head as it arrives.
  unsigned status = 0;
  h2_fields fields;
  std::size_t header_bytes = 0;  // this head's and its trailers', decoded
  bool head_delivered = false;
  bool response_ended = false;
  bool cancelled = false;  // reset() by gistproxy: no event follows
  // Set before gistproxy has nghttp2 reset the stream: the reason told.
  std::optional<h2_client_failure> failure;
  std::uint64_t unconsumed = 0;  // body bytes handed over, not yet consumed()
  // The request body going out.
  std::string body;
  std::size_t sent = 0;
  bool last = true, deferred = false;
};

// nghttp2's callbacks, each a thin step into the connection. Every one is
// noexcept: an exception must never unwind through nghttp2's C frames.
struct h2_client_callbacks {
  static void install(nghttp2_session_callbacks* cb);
  static ssize_t read_data(nghttp2_session*, std::int32_t stream, std::uint8_t* buf, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source*, void* user) noexcept;

 private:
  template <class Step>
  static int guarded(void* user, std::int32_t stream, int stream_error, Step&& step) noexcept;
  static int header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t name_length,
                    const std::uint8_t* value, std::size_t value_length, std::uint8_t, void* user) noexcept;
  static int data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
                        std::size_t length, void* user) noexcept;
  static int frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) noexcept;
  static int frame_not_send(nghttp2_session*, const nghttp2_frame* frame, int, void* user) noexcept;
  static int stream_close(nghttp2_session*, std::int32_t stream, std::uint32_t code, void* user) noexcept;
};

}  // namespace gistproxy::proxy
