// A small HTTP/2 client for tests (h2c, prior knowledge) on nghttp2's client
// API: it can do what curl cannot — hold one stream's window shut while
// others flow, reset streams in a loop — over a blocking socket, every wait
// bounded by a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct nghttp2_session;
struct ssl_ctx_st;
struct ssl_st;

namespace gistproxy::testing {

class h2_client {
 public:
  struct response {
    int status = 0;
    std::string body;
    bool closed = false;
    std::uint32_t error_code = 0;  // RST_STREAM's, when reset
  };

  // `initial_window`: the window each stream starts with (0: nothing flows
  // until open_window). `tls_ca` set: h2 over TLS (ALPN h2, the server
  // named localhost, its certificate from that CA), else h2c.
  explicit h2_client(std::uint16_t port, std::uint32_t initial_window = 65535, const std::string& tls_ca = {});
  ~h2_client();
  h2_client(const h2_client&) = delete;
  h2_client& operator=(const h2_client&) = delete;

  // A request; `end`: whether the body (possibly empty) ends it. Returns the stream id.
  std::int32_t submit(const std::string& method, const std::string& path, const std::string& body,
                      const std::vector<std::pair<std::string, std::string>>& headers = {}, bool end = true);
  void open_window(std::int32_t stream, std::int32_t increment);
  void reset(std::int32_t stream);
  // Sends what is queued and reads until `done()` holds, the connection
  // ends or `timeout` passes; returns done().
  bool pump_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Sends what is queued, reading nothing.
  void send_queued() { pump_until([] { return false; }, std::chrono::milliseconds(0)); }
  // Raw bytes on the socket, outside nghttp2 (malformed frames).
  void send_raw(const std::string& bytes);

  std::map<std::int32_t, response> responses;
  std::optional<std::uint32_t> goaway;  // the server's GOAWAY error code
  std::int32_t goaway_last_stream = -1;   // and the last stream it names as taken
  bool ended = false;                   // the server closed the connection

 private:
  friend struct h2_client_callbacks;
  bool flush();
  void start_tls(const std::string& ca);
  bool write_all(const void* data, std::size_t n);
  long read_some(char* buf, std::size_t n);
  int fd_ = -1;
  ssl_ctx_st* tls_ctx_ = nullptr;
  ssl_st* tls_ = nullptr;
  nghttp2_session* session_ = nullptr;
  std::map<std::int32_t, std::pair<std::string, std::size_t>> uploads_;
};

}  // namespace gistproxy::testing
