#include "proxy/runtime/freed_memory.hpp"

// Weak: defined when libmimalloc is loaded (the gistproxy binary links it),
// null otherwise (tests, sanitizer builds), without linking it here.
extern "C" void mi_collect(bool force) __attribute__((weak));

namespace gistproxy::proxy {

bool can_return_freed_memory() { return mi_collect != nullptr; }

void return_freed_memory() {
  if (mi_collect) mi_collect(false);
}

freed_memory_sweeper::freed_memory_sweeper(asio::io_context& io, std::chrono::milliseconds period) : period_(period) {
  if (!can_return_freed_memory() || period.count() <= 0) return;
  timer_.emplace(io);
  arm();
}

freed_memory_sweeper::~freed_memory_sweeper() { timer_.reset(); }

void freed_memory_sweeper::arm() {
  timer_->expires_after(period_);
  timer_->async_wait([this](error_code ec) {
    if (ec) return;  // cancelled: the sweeper is going away
    return_freed_memory();
    arm();
  });
}

}  // namespace gistproxy::proxy
