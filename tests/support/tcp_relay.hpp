// A TCP relay on loopback whose destination is set after it listens: a
// gistproxy's upstream can then lead back into that very gistproxy (its port
// is known only once it runs), as a gateway in front of it might. It counts
// the connections it accepted and relays at most `max_connections` of them;
// later ones are closed at once, so a loop the proxy fails to notice ends
// instead of nesting until descriptors run out. One thread per connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gistproxy::testing {

class tcp_relay {
 public:
  explicit tcp_relay(std::size_t max_connections);
  ~tcp_relay();
  tcp_relay(const tcp_relay&) = delete;
  tcp_relay& operator=(const tcp_relay&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Where the connections accepted from now on go (127.0.0.1:port).
  void point_at(std::uint16_t port) { target_ = port; }
  std::size_t connections() const { return connections_.load(); }  // accepted, relayed or not

 private:
  void accept_loop();
  void relay(int client);

  std::size_t max_connections_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<std::uint16_t> target_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> connections_{0};
  std::mutex mutex_;
  std::vector<std::thread> workers_;  // under mutex_
  std::thread acceptor_;
};

}  // namespace gistproxy::testing
