// A byte-exact scripted upstream for hostile-answer tests: it reads each
// request (headers and Content-Length body) and answers with the next
// scripted bytes, verbatim — odd JSON, broken SSE, or no answer at all.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gistproxy::testing {

struct raw_answer {
  std::string bytes;          // written as is after the request was read
  bool close_after = false;   // close the connection once written (or at once if bytes is empty)
  // Offsets into `bytes` before which the writer pauses 50 ms (TCP_NODELAY):
  // the proxy then reads the answer in those pieces, as a slow network cuts it.
  std::vector<std::size_t> pause_before = {};
};

class raw_upstream {
 public:
  // Request i gets script[i]; requests past the end get the last entry.
  explicit raw_upstream(std::vector<raw_answer> script);
  ~raw_upstream();
  std::uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::size_t requests() const { return requests_.load(); }
  std::vector<std::string> bodies() const;
  std::vector<std::string> heads() const;  // request line and header fields, as received

  // A whole HTTP/1.1 response around a body.
  static std::string response(const std::string& body, const std::string& content_type = "application/json",
                              int status = 200);

 private:
  void serve();
  void serve_connection(int fd);

  std::vector<raw_answer> script_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> requests_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> bodies_;
  std::vector<std::string> heads_;
  std::thread thread_;
};

}  // namespace gistproxy::testing
