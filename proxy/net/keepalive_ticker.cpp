#include "proxy/net/keepalive_ticker.hpp"

#include <boost/asio/co_spawn.hpp>

namespace gistproxy::proxy {

keepalive_ticker::keepalive_ticker(client_channel& client, std::string event, std::chrono::milliseconds interval)
    : state_(std::make_shared<state>(client, std::move(event), interval)) {}

keepalive_ticker::~keepalive_ticker() {
  state_->running = false;
  state_->tick.cancel();
}

void keepalive_ticker::start() {
  if (state_->interval.count() <= 0 || state_->failed) return;
  state_->running = true;
  arm(state_);
}

awaitable<error_code> keepalive_ticker::write_event(std::shared_ptr<state> s) {
  co_return co_await s->client.write_body(s->event, false);
}

void keepalive_ticker::arm(const std::shared_ptr<state>& s) {
  s->tick.expires_after(s->interval);
  s->tick.async_wait([s](error_code ec) {
    if (ec || !s->running) return;
    s->writing = true;
    // stop() waits for this write, so the channel (the client's) outlives it.
    asio::co_spawn(s->client.get_executor(), write_event(s), [s](std::exception_ptr e, error_code wec) {
      s->writing = false;
      s->write_done.cancel();  // wakes a stop() waiting for this write
      if (e || wec) s->failed = true;
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
