// Each tenant's share of the store pool: one tenant's bulk work, however
// much of it, never holds every store thread, so another tenant's offload
// or page-in runs while it waits. Asserted by what ran while what was
// blocked, never by how long anything took.
#include <catch2/catch.hpp>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <thread>

#include "proxy/runtime/store_lanes.hpp"

using namespace gistproxy::proxy;

namespace {

// Polls `done` until it holds or 20 s pass (a deadline, not a timing).
template <class F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

struct store_work {
  std::atomic<int> running{0}, most_at_once{0}, finished{0};
  void ran() {
    const int now = ++running;
    for (int seen = most_at_once; now > seen && !most_at_once.compare_exchange_weak(seen, now);) {
    }
  }
};

// What the exchange does: a place in the tenant's lane, then the blocking
// work on the store pool (store_lanes.hpp, rewrite_phase.cpp, blob_pager.cpp).
awaitable<void> offload(store_lanes& lanes, asio::thread_pool& pool, std::string tenant, store_work& w,
                        std::shared_future<void> release) {
  const auto place = co_await enter_lane(&lanes, tenant);
  co_await asio::co_spawn(
      pool.get_executor(),
      [&]() -> asio::awaitable<void> {
        w.ran();
        release.wait();  // a bulk offload fsync-ing blob after blob
        --w.running;
        ++w.finished;
        co_return;
      },
      use_awaitable);
}

}  // namespace

TEST_CASE("one tenant's bulk store work leaves a store thread to another tenant which runs while it is blocked") {
  asio::thread_pool pool(2);
  store_lanes lanes(1);  // the server's share: half of 2 store threads
  asio::io_context io;   // one I/O thread, as a shard has
  std::promise<void> bulk_may_finish;
  std::shared_future<void> bulk_release = bulk_may_finish.get_future().share();
  std::promise<void> now;
  now.set_value();
  store_work bulk, other;
  for (int i = 0; i < 4; ++i) asio::co_spawn(io, offload(lanes, pool, "tenant-a", bulk, bulk_release), asio::detached);
  asio::co_spawn(io, offload(lanes, pool, "tenant-b", other, now.get_future().share()), asio::detached);
  std::thread runner([&] {
    auto guard = asio::make_work_guard(io);
    io.run_for(std::chrono::seconds(30));
  });
  // Tenant B's offload finishes while all of tenant A's are still blocked...
  const bool other_ran = eventually([&] { return other.finished == 1; });
  CHECK(other_ran);  // was: A's first two took both threads and B queued behind them
  CHECK(bulk.finished == 0);
  CHECK(bulk.most_at_once == 1);
  // ...and A's four then run one at a time, in turn.
  bulk_may_finish.set_value();
  CHECK(eventually([&] { return bulk.finished == 4; }));
  CHECK(bulk.most_at_once == 1);
  CHECK(eventually([&] { return lanes.tenants() == 0; }));  // idle tenants keep no lane
  io.stop();
  runner.join();
  pool.join();
}

TEST_CASE("a tenant's waiting work runs in the order it arrived") {
  asio::thread_pool pool(1);
  store_lanes lanes(1);
  asio::io_context io;
  std::vector<int> order;
  std::mutex m;
  for (int i = 0; i < 5; ++i)
    asio::co_spawn(
        io,
        [&, i]() -> awaitable<void> {
          const auto place = co_await enter_lane(&lanes, "tenant-a");
          co_await asio::co_spawn(
              pool.get_executor(),
              [&]() -> asio::awaitable<void> {
                std::lock_guard lock(m);
                order.push_back(i);
                co_return;
              },
              use_awaitable);
        },
        asio::detached);
  io.run_for(std::chrono::seconds(20));
  std::lock_guard lock(m);
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(lanes.tenants() == 0);
}
