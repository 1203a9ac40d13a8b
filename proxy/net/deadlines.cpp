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

std::size_t deadline_sweeper::armed() const {
  std::size_t n = 0;
  for (auto* d = head_; d; d = d->next_) n += d->armed();
  return n;
}

void deadline_sweeper::link(socket_deadline& d) {
  d.prev_ = nullptr;
  d.next_ = head_;
  if (head_) head_->prev_ = &d;
  head_ = &d;
  d.linked_ = true;
  ++linked_;
}

void deadline_sweeper::unlink(socket_deadline& d) {
  if (d.prev_) d.prev_->next_ = d.next_;
  else head_ = d.next_;
  if (d.next_) d.next_->prev_ = d.prev_;
  d.prev_ = d.next_ = nullptr;
  d.linked_ = false;
  --linked_;
}

void deadline_sweeper::due_at(clock::time_point t) {
  if (t < earliest_) earliest_ = t;
  if (!ticking_ && timer_) tick();
}

// Ticks only while some deadline is linked, so an idle shard does not wake up.
void deadline_sweeper::tick() {
  ticking_ = true;
  timer_->expires_after(resolution_);
  timer_->async_wait([this](error_code ec) {
    if (ec) return;  // stopped: `this` may be going away
    ticking_ = false;
    sweep(clock::now());
    if (linked_ && timer_) tick();
  });
}

void deadline_sweeper::sweep(clock::time_point now) {
  if (now < earliest_) return;  // nothing can be due: no walk
  earliest_ = clock::time_point::max();
  for (socket_deadline* d = head_; d;) {
    socket_deadline* next = d->next_;
    if (!d->armed()) {
      unlink(*d);
    } else if (d->due_ <= now) {
      unlink(*d);
      d->due_ = clock::time_point::max();
      d->expired_ = true;
      error_code ignored;
      d->socket_.close(ignored);  // pending operations end now
    } else if (d->due_ < earliest_) {
      earliest_ = d->due_;
    }
    d = next;
  }
}

socket_deadline::~socket_deadline() {
  if (linked_) sweeper_.unlink(*this);
}

socket_deadline::scope socket_deadline::arm(std::chrono::milliseconds after) {
  set(after);
  return scope(*this);
}

void socket_deadline::set(std::chrono::milliseconds after) {
  due_ = deadline_sweeper::clock::now() + after;
  if (!linked_) sweeper_.link(*this);
  sweeper_.due_at(due_);
}

void socket_deadline::disarm() { due_ = deadline_sweeper::clock::time_point::max(); }

}  // namespace gistproxy::proxy
