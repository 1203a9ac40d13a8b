#include "proxy/net/deadlines.hpp"

#include <time.h>

namespace gistproxy::proxy {

coarse_clock::time_point coarse_clock::now() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
}

void deadline_sweeper::start(executor ex) { timer_.emplace(ex); }

void deadline_sweeper::stop() {
  timer_.reset();  // its pending wait is abandoned with the io_context
  ticking_ = false;
}

void deadline_sweeper::link(socket_deadline& d) {
  d.prev_ = nullptr;
  d.next_ = head_;
  if (head_) head_->prev_ = &d;
  head_ = &d;
  d.linked_ = true;
  ++armed_;
  if (!ticking_ && timer_) tick();
}

void deadline_sweeper::unlink(socket_deadline& d) {
  if (d.prev_) d.prev_->next_ = d.next_;
  else head_ = d.next_;
  if (d.next_) d.next_->prev_ = d.prev_;
  d.prev_ = d.next_ = nullptr;
  d.linked_ = false;
  --armed_;
}

// Ticks only while something is armed, so an idle shard does not wake up.
void deadline_sweeper::tick() {
  ticking_ = true;
  timer_->expires_after(resolution_);
  timer_->async_wait([this](error_code ec) {
    if (ec) return;  // stopped: `this` may be going away
    ticking_ = false;
    sweep(clock::now());
    if (armed_ && timer_) tick();
  });
}

void deadline_sweeper::sweep(clock::time_point now) {
  for (socket_deadline* d = head_; d;) {
    socket_deadline* next = d->next_;
    if (d->due_ <= now) {
      unlink(*d);
      d->expired_ = true;
      error_code ignored;
      d->socket_.close(ignored);  // pending operations end now
    }
    d = next;
  }
}

socket_deadline::scope socket_deadline::arm(std::chrono::milliseconds after) {
  set(after);
  return scope(*this);
}

void socket_deadline::set(std::chrono::milliseconds after) {
  due_ = deadline_sweeper::clock::now() + after;
  if (!linked_) sweeper_.link(*this);
}

void socket_deadline::disarm() {
  if (linked_) sweeper_.unlink(*this);
}

}  // namespace gistproxy::proxy
