// Blocking HTTP/1.1 client helpers for tests (bounded by timeouts).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gistproxy::testing {

struct http_result {
  int status = 0;
  std::map<std::string, std::string> headers;  // lowercase names
  std::string body;
  std::string error;  // set when the exchange failed (e.g. the body ended abnormally)
  bool ok() const { return error.empty(); }
};

// One request on a new connection.
http_result http_request(std::uint16_t port, const std::string& method, const std::string& target,
                         const std::string& body = {}, const std::map<std::string, std::string>& headers = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(20));

// A kept-alive connection for several requests.
class http_connection {
 public:
  explicit http_connection(std::uint16_t port);
  ~http_connection();
  http_result request(const std::string& method, const std::string& target, const std::string& body = {},
                      const std::map<std::string, std::string>& headers = {});
  bool is_open() const;

 private:
  struct impl;
  impl* impl_;
};

// Streams a response, recording when each body piece arrived (ms since the request was sent).
struct timed_piece {
  double at_ms;
  std::string bytes;
};
struct streamed_result {
  int status = 0;
  std::vector<timed_piece> pieces;
  std::string error;
};
streamed_result http_stream(std::uint16_t port, const std::string& method, const std::string& target,
                            const std::string& body = {}, std::chrono::milliseconds timeout = std::chrono::seconds(20));

// Raw bytes in, raw bytes out (until the peer closes or the timeout).
std::string raw_exchange(std::uint16_t port, const std::string& bytes,
                         std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace gistproxy::testing
