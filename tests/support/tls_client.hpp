// A TLS client connection to a gistproxy listener for tests, kept open
// across requests: which certificate it was served, which protocol ALPN
// chose, and HTTP/1.1 answers on the one connection. Every operation is
// bounded (run_for), so a proxy that does not answer fails the test.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/http_client.hpp"

namespace gistproxy::testing {

struct tls_client_options {
  std::filesystem::path ca;         // trusted for the server's certificate
  std::filesystem::path cert, key;  // the client's certificate (empty: none)
  std::string alpn = "http/1.1";    // the one protocol offered (empty: no ALPN)
};

class tls_client {
 public:
  tls_client(std::uint16_t port, const tls_client_options& options,
             std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~tls_client();
  // Empty when the handshake succeeded; else why it failed.
  const std::string& handshake_error() const;
  std::string peer_common_name() const;
  std::string negotiated_alpn() const;
  http_result request(const std::string& method, const std::string& target, const std::string& body = {});
  // A request written as given (any size of field), its answer read.
  http_result raw_request(const std::string& bytes);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace gistproxy::testing
