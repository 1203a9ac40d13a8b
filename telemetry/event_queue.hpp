// A bounded multi-producer queue: I/O threads push one event per request
// (a short lock around a move, never across I/O); one consumer takes the
// lot. When full, events are dropped and counted: the hot path never waits
// for the reader, and memory stays bounded whatever the request rate. The
// memory follows the rate below the bound: nothing is reserved up front, and
// each take() leaves room for as many as the last batch held (reserved
// outside the producers' lock, so the hot path rarely reallocates).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gistproxy::telemetry {

template <class T>
class event_queue {
 public:
  explicit event_queue(std::size_t capacity) : capacity_(capacity) {}

  bool push(T&& item) {
    {
      std::lock_guard lock(mutex_);
      if (items_.size() < capacity_) {
        items_.push_back(std::move(item));
        return true;
      }
    }
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  // Everything queued so far, oldest first; the queue is left empty.
  std::vector<T> take() {
    std::vector<T> out;
    out.reserve(last_batch_);
    {
      std::lock_guard lock(mutex_);
      out.swap(items_);
    }
    last_batch_ = out.size();  // the consumer's own: take() has one caller at a time
    return out;
  }

  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  std::mutex mutex_;
  std::vector<T> items_;
  std::size_t last_batch_ = 0;
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace gistproxy::telemetry
