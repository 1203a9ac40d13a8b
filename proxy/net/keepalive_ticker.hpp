// Keeps a client stream alive while a page-in hop waits on the upstream:
// every interval it writes the API's keep-alive event as a body piece (the
// channel frames it: a chunk on HTTP/1.1, DATA on HTTP/2), and it only
// writes while the exchange itself is not writing (between start() and stop()).
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "proxy/net/beast.hpp"
#include "proxy/net/client_channel.hpp"

namespace gistproxy::proxy {

class keepalive_ticker {
 public:
  // `event`: the bytes of one keep-alive event; the channel bounds each write.
  keepalive_ticker(client_channel& client, std::string event, std::chrono::milliseconds interval);
  ~keepalive_ticker();
  void start();
  // Stops ticking and waits for a keep-alive write still in flight, so the
  // caller may write to the client again.
  awaitable<void> stop();
  std::uint64_t sent() const { return state_->sent; }

 private:
  struct state {
    asio::steady_timer tick, write_done;
    client_channel& client;
    std::string event;
    std::chrono::milliseconds interval;
    bool running = false, writing = false, failed = false;
    std::uint64_t sent = 0;
    state(client_channel& c, std::string f, std::chrono::milliseconds i)
        : tick(c.get_executor()), write_done(c.get_executor()), client(c), event(std::move(f)), interval(i) {}
  };
  static void arm(const std::shared_ptr<state>& s);
  static awaitable<error_code> write_event(std::shared_ptr<state> s);
  std::shared_ptr<state> state_;  // shared with pending handlers
};

}  // namespace gistproxy::proxy
