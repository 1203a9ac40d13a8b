// What h2_connection.cpp and h2_callbacks.cpp share, and nothing else uses:
// one stream's request as it is assembled, and the callbacks' entry points.
#pragma once

#include <nghttp2/nghttp2.h>

#include "proxy/net/h2_connection.hpp"

namespace gistproxy::proxy {

struct h2_connection::incoming {
  std::string method, path, authority, scheme;
  boost::beast::http::request<boost::beast::http::string_body> request;
  std::size_t header_bytes = 0;
  h2_connection::clock::time_point began;
  bool headers_done = false;  // the header block is complete: a response may be sent
  bool delivered = false;
  bool client_done = false;  // the client ended its side (END_STREAM)
  std::optional<proxy_error> refusal;  // set while the head arrives: it is answered once the head is in
};

// nghttp2's callbacks, each a thin step into the connection. Every one is
// noexcept: an exception must never unwind through nghttp2's C frames.
struct h2_callbacks {
  static void install(nghttp2_session_callbacks* cb);
  static ssize_t read_data(nghttp2_session*, std::int32_t stream, std::uint8_t* buf, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source*, void* user) noexcept;

 private:
  template <class Step>
  static int guarded(void* user, std::int32_t stream, int stream_error, Step&& step) noexcept;
  static int begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) noexcept;
  static int header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name, std::size_t name_length,
                    const std::uint8_t* value, std::size_t value_length, std::uint8_t, void* user) noexcept;
  static int data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data,
                        std::size_t length, void* user) noexcept;
  static int frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) noexcept;
  static int frame_send(nghttp2_session*, const nghttp2_frame* frame, void* user) noexcept;
  static int frame_not_send(nghttp2_session*, const nghttp2_frame* frame, int, void* user) noexcept;
  static int stream_close(nghttp2_session*, std::int32_t stream, std::uint32_t code, void* user) noexcept;
};

}  // namespace gistproxy::proxy
