#include "rewrite/page_in/churn_tracker.hpp"

namespace gistproxy::rewrite {

std::uint64_t churn_tracker::begin_turn(const std::string& trace) {
  std::lock_guard lock(mutex_);
  if (traces_.size() >= max_traces_ && !traces_.count(trace)) traces_.clear();  // bounded memory
  return ++traces_[trace].turns;
}

bool churn_tracker::offloaded(const std::string& trace, const std::string& hash, std::uint64_t turn) {
  std::lock_guard lock(mutex_);
  auto& t = traces_[trace];
  // try_emplace: a hash seen before (most, every turn) costs a lookup, not a node built and thrown away.
  return t.first_offload.size() < 10000 && t.first_offload.try_emplace(hash, turn).second;
}

std::optional<std::uint64_t> churn_tracker::turns_since_offload(const std::string& trace, const std::string& hash,
                                                                std::uint64_t turn) {
  std::lock_guard lock(mutex_);
  auto it = traces_.find(trace);
  if (it == traces_.end()) return std::nullopt;
  auto h = it->second.first_offload.find(hash);
  if (h == it->second.first_offload.end()) return std::nullopt;
  return turn >= h->second ? turn - h->second : 0;
}

}  // namespace gistproxy::rewrite
