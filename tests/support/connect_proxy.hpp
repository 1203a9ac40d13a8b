// A small outbound HTTP proxy for egress tests, on loopback: it answers
// CONNECT HOST:PORT with 200 and relays bytes both ways until either side
// closes. It records every CONNECT target and Proxy-Authorization value,
// and can refuse (any status), demand credentials (407 unless the header is
// exactly the expected value) or drop tunnels once the client sends through
// them, or never answer. Anything but CONNECT gets a 405. One thread per connection.
// Deliberately minimal: no absolute-form forwarding, no keep-alive of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gistproxy::testing {

struct connect_proxy_options {
  int refuse_status = 0;                // answer every CONNECT with this status instead (e.g. 403)
  std::string required_authorization;   // e.g. "Basic dXNlcjpwYXNz"; anything else gets a 407
  std::size_t drop_tunnels = 0;         // the first N tunnels close once the client's first bytes arrive
  bool silent = false;                  // read each CONNECT, never answer it (until the client leaves)
  // Dial this address whatever host a CONNECT names: names only the proxy can
  // resolve (as behind a corporate proxy), so only a tunnel reaches them.
  std::string resolve_all_to;

  static connect_proxy_options refusing(int status) {
    connect_proxy_options o;
    o.refuse_status = status;
    return o;
  }
  static connect_proxy_options requiring(std::string authorization) {
    connect_proxy_options o;
    o.required_authorization = std::move(authorization);
    return o;
  }
  static connect_proxy_options dropping(std::size_t tunnels) {
    connect_proxy_options o;
    o.drop_tunnels = tunnels;
    return o;
  }
  static connect_proxy_options never_answering() {
    connect_proxy_options o;
    o.silent = true;
    return o;
  }
  static connect_proxy_options resolving_all_to(std::string address) {
    connect_proxy_options o;
    o.resolve_all_to = std::move(address);
    return o;
  }
};

class connect_proxy {
 public:
  explicit connect_proxy(connect_proxy_options options = {});
  ~connect_proxy();
  connect_proxy(const connect_proxy&) = delete;
  connect_proxy& operator=(const connect_proxy&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The URL with credentials: http://USERINFO@127.0.0.1:PORT (USERINFO as given, already encoded).
  std::string url_with(const std::string& userinfo) const;

  std::size_t connections() const { return connections_.load(); }  // accepted, whatever happened next
  std::size_t tunnels() const { return tunnels_.load(); }          // CONNECTs answered 200
  std::vector<std::string> targets() const;         // every CONNECT's HOST:PORT, in order
  std::vector<std::string> authorizations() const;  // every CONNECT's Proxy-Authorization ("" if none)

 private:
  void accept_loop();
  void serve(int fd);
  void relay(int client, int upstream, bool drop);

  connect_proxy_options options_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> connections_{0}, tunnels_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> targets_, authorizations_;
  std::vector<std::thread> workers_;  // under mutex_
  std::thread acceptor_;
};

}  // namespace gistproxy::testing
