// Fair shares of the store pool between tenants. Blocking store work (a
// rewrite that hashes, compresses and fsyncs its blobs, a page-in's read)
// holds a store thread for as long as it runs; one tenant's bulk
// /v1/offload, several requests at once, would hold them all while another
// tenant's offload and page-in queue behind it. A tenant may hold at most
// `per_tenant` store threads at a time; its further work waits in its own
// queue (first come, first served) holding no thread, so the other threads
// stay free for the other tenants.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

class store_lanes {
 public:
  explicit store_lanes(std::size_t per_tenant) : per_tenant_(per_tenant ? per_tenant : 1) {}

  // A held place in a tenant's lane: given back when it is destroyed.
  class ticket {
   public:
    ticket() = default;
    ticket(store_lanes* lanes, std::string tenant) : lanes_(lanes), tenant_(std::move(tenant)) {}
    ticket(ticket&& o) noexcept : lanes_(std::exchange(o.lanes_, nullptr)), tenant_(std::move(o.tenant_)) {}
    ticket& operator=(ticket&&) = delete;
    ~ticket() {
      if (lanes_) lanes_->leave(tenant_);
    }

   private:
    store_lanes* lanes_ = nullptr;
    std::string tenant_;
  };

  // Waits (on the caller's I/O thread, holding nothing) until the tenant
  // holds fewer than per_tenant places, then takes one.
  awaitable<ticket> enter(std::string tenant);

  std::size_t per_tenant() const { return per_tenant_; }
  std::size_t tenants() const;  // with work held or waiting (a lane is dropped when idle)

 private:
  using timer = asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>, executor>;
  struct parked {
    explicit parked(executor ex) : wake(ex, timer::time_point::max()) {}
    timer wake;
    bool handed = false;  // leave() gave it a place (under mutex_)
  };
  struct lane {
    std::size_t busy = 0;
    // First come, first served. Weak: a caller's coroutine owns its wait, so
    // one destroyed while parked (shutdown) takes its timer with it.
    std::deque<std::weak_ptr<parked>> waiting;
  };
  void leave(const std::string& tenant);

  const std::size_t per_tenant_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, lane> lanes_;
};

// A place in `tenant`'s lane when there are lanes (the server), none
// otherwise (tests that build services by hand).
inline awaitable<store_lanes::ticket> enter_lane(store_lanes* lanes, std::string tenant) {
  if (!lanes) co_return store_lanes::ticket{};
  co_return co_await lanes->enter(std::move(tenant));
}

}  // namespace gistproxy::proxy
