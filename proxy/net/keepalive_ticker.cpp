#include "proxy/net/keepalive_ticker.hpp"

#include <boost/asio/write.hpp>

namespace gistproxy::proxy {

keepalive_ticker::keepalive_ticker(tcp_socket& client, socket_deadline& deadline, std::chrono::milliseconds write_timeout,
                                   std::string framed_chunk, std::chrono::milliseconds interval)
    : state_(std::make_shared<state>(client, deadline, write_timeout, std::move(framed_chunk), interval)) {}

keepalive_ticker::~keepalive_ticker() {
  state_->running = false;
  state_->tick.cancel();
}

void keepalive_ticker::start() {
  if (state_->interval.count() <= 0 || state_->failed) return;
  state_->running = true;
  arm(state_);
}

void keepalive_ticker::arm(const std::shared_ptr<state>& s) {
  s->tick.expires_after(s->interval);
  s->tick.async_wait([s](error_code ec) {
    if (ec || !s->running) return;
    s->writing = true;
    // stop() waits for this write, so the deadline (the client's) outlives it.
    s->deadline.set(s->write_timeout);
    asio::async_write(s->client, asio::buffer(s->frame), [s](error_code wec, std::size_t) {
      s->deadline.disarm();
      s->writing = false;
      s->write_done.cancel();  // wakes a stop() waiting for this write
      if (wec) s->failed = true;
      else ++s->sent;
      if (s->running && !s->failed) arm(s);
    });
  });
}

awaitable<void> keepalive_ticker::stop() {
  auto s = state_;
  s->running = false;
  s->tick.cancel();
  while (s->writing) {
    s->write_done.expires_at(std::chrono::steady_clock::time_point::max());
    co_await s->write_done.async_wait(use_nothrow);
  }
}

}  // namespace gistproxy::proxy
