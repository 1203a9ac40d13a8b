// Keeps a client stream alive while a page-in hop waits on the upstream:
// every interval it writes the API's keep-alive event (a chunk), and it only
// writes while the exchange itself is not writing (between start() and stop()).
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "proxy/net/beast.hpp"
#include "proxy/net/deadlines.hpp"

namespace gistproxy::proxy {

class keepalive_ticker {
 public:
  // Each write must finish within `write_timeout` (the client timeout).
  keepalive_ticker(tcp_socket& client, socket_deadline& deadline, std::chrono::milliseconds write_timeout,
                   std::string framed_chunk, std::chrono::milliseconds interval);
  ~keepalive_ticker();
  void start();
  // Stops ticking and waits for a keep-alive write still in flight, so the
  // caller may write to the client again.
  awaitable<void> stop();
  std::uint64_t sent() const { return state_->sent; }

 private:
  struct state {
    asio::steady_timer tick, write_done;
    tcp_socket& client;
    socket_deadline& deadline;
    std::chrono::milliseconds write_timeout;
    std::string frame;
    std::chrono::milliseconds interval;
    bool running = false, writing = false, failed = false;
    std::uint64_t sent = 0;
    state(tcp_socket& c, socket_deadline& d, std::chrono::milliseconds w, std::string f, std::chrono::milliseconds i)
        : tick(c.get_executor()), write_done(c.get_executor()), client(c), deadline(d), write_timeout(w),
          frame(std::move(f)), interval(i) {}
  };
  static void arm(const std::shared_ptr<state>& s);
  std::shared_ptr<state> state_;  // shared with pending handlers
};

}  // namespace gistproxy::proxy
