// An HTTP/2 stand-in for Bedrock Runtime on loopback (h2c, prior knowledge:
// an http:// upstream; or TLS choosing ALPN h2 when given a certificate), that checks every request's SigV4 signature as AWS
// does (sigv4_verifier.hpp): over the pseudo-headers and fields it received.
// A request that verifies gets a Converse answer (…/converse: JSON) or a
// stream (…/converse-stream: AWS event-stream messages, one DATA frame each);
// one that does not gets 403 with the reason, as Bedrock's
// InvalidSignatureException. A streamed request whose body holds "stall"
// gets its first event and then nothing, until the peer gives it up
// (counted: cancelled()). It records what it saw for assertions.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

struct ssl_ctx_st;

namespace gistproxy::testing {

struct h2_request_seen {
  std::vector<std::pair<std::string, std::string>> fields;  // pseudo-headers first, in the order received
  std::string body;
  bool verified = false;
  std::string why;  // why the signature did not verify
  std::string field(const std::string& name) const;
};

class mock_upstream_h2 {
 public:
  // `tls_cert_file`/`tls_key_file` (PEM) set: TLS, ALPN h2, named localhost.
  explicit mock_upstream_h2(std::string secret_access_key, const std::string& tls_cert_file = {},
                            const std::string& tls_key_file = {});
  ~mock_upstream_h2();
  mock_upstream_h2(const mock_upstream_h2&) = delete;
  mock_upstream_h2& operator=(const mock_upstream_h2&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const {
    return tls_ ? "https://localhost:" + std::to_string(port_) : "http://127.0.0.1:" + std::to_string(port_);
  }
  std::vector<h2_request_seen> requests() const;
  // Streams the peer reset, or left open when it closed the connection.
  int cancelled() const;
  int connections() const;  // accepted so far
  // Each answer is followed by GOAWAY: the connection takes no more streams.
  void goaway_after_answer(bool on);
  // The next request on a connection that already answered one is refused
  // (GOAWAY naming the last answered stream: it was never processed), as by
  // a front end that began to close the idle connection as it arrived.
  void refuse_next_on_reused();
  // The body bytes of every streamed answer it sent, in order.
  static std::string converse_stream_bytes();

  struct state;

 private:
  void accept_loop();
  void serve(int fd);

  std::string secret_;
  ssl_ctx_st* tls_ = nullptr;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::shared_ptr<state> state_;
  std::thread acceptor_;
  std::vector<std::thread> connections_;
  std::mutex threads_mutex_;
};

}  // namespace gistproxy::testing
