#include "proxy/runtime/store_lanes.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

namespace gistproxy::proxy {

awaitable<store_lanes::ticket> store_lanes::enter(std::string tenant) {
  const auto ex = co_await asio::this_coro::executor;
  std::shared_ptr<parked> me;
  {
    std::lock_guard lock(mutex_);
    auto& l = lanes_[tenant];
    if (l.busy < per_tenant_) {
      ++l.busy;
      co_return ticket(this, std::move(tenant));
    }
    me = std::make_shared<parked>(ex);
    l.waiting.push_back(me);
  }
  // leave() hands its place over (busy stays) and wakes this wait by moving
  // the expiry into the past, which ends a wait already begun and one not
  // begun yet alike.
  co_await me->wake.async_wait(use_nothrow);
  {
    std::lock_guard lock(mutex_);
    if (!me->handed) {
      // Woken by anything else (nothing in the proxy cancels this wait):
      // counted in rather than parked for ever.
      auto& l = lanes_[tenant];
      std::erase_if(l.waiting, [&](const auto& w) { return w.lock() == me; });
      ++l.busy;
    }
  }
  co_return ticket(this, std::move(tenant));
}

void store_lanes::leave(const std::string& tenant) {
  std::shared_ptr<parked> next;
  {
    std::lock_guard lock(mutex_);
    auto it = lanes_.find(tenant);
    if (it == lanes_.end()) return;
    auto& l = it->second;
    while (!next && !l.waiting.empty()) {
      next = l.waiting.front().lock();
      l.waiting.pop_front();
    }
    if (!next) {
      if (--l.busy == 0) lanes_.erase(it);  // bounded: only tenants with work in flight have a lane
      return;
    }
    next->handed = true;
  }
  // The timer belongs to the waiter's I/O thread: touched only there.
  asio::post(next->wake.get_executor(), [w = std::weak_ptr<parked>(next)] {
    if (auto p = w.lock()) p->wake.expires_at(timer::time_point::min());
  });
}

std::size_t store_lanes::tenants() const {
  std::lock_guard lock(mutex_);
  return lanes_.size();
}

}  // namespace gistproxy::proxy
