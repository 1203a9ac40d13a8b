#include "rewrite/page_in/churn_tracker.hpp"

#include <algorithm>

namespace gistproxy::rewrite {

std::uint64_t churn_tracker::begin_turn(const std::string& trace) {
  std::lock_guard lock(mutex_);
  if (traces_.size() >= max_traces_ && !traces_.count(trace)) traces_.clear();  // bounded memory
  return ++traces_[trace].turns;
}

namespace {

constexpr std::size_t max_handles_per_trace = 10000;

// A hash seen before (most, every turn) costs a lookup, not a node built and thrown away.
template <class Map>
bool note_first(Map& first_offload, std::string_view hash, std::uint64_t turn) {
  if (first_offload.find(hash) != first_offload.end() || first_offload.size() >= max_handles_per_trace) return false;
  first_offload.emplace(std::string(hash), turn);
  return true;
}

}  // namespace

void churn_tracker::offloaded(const std::string& trace, std::span<const std::string_view> hashes, std::uint64_t turn,
                              std::vector<bool>& first) {
  first.assign(hashes.size(), false);
  if (hashes.empty()) return;
  std::lock_guard lock(mutex_);
  auto& handles = traces_[trace].first_offload;
  for (std::size_t i = 0; i < hashes.size(); ++i) first[i] = note_first(handles, hashes[i], turn);
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

conversation_record churn_tracker::record(const std::string& trace) {
  conversation_record r;
  std::lock_guard lock(mutex_);
  auto it = traces_.find(trace);
  if (it == traces_.end()) return r;
  r.offered = it->second.offered;
  it->second.read_backs.fill(r, it->second.turns);
  if (r.churning) {
    r.offloaded_handles.reserve(it->second.first_offload.size());
    for (const auto& [hash, turn] : it->second.first_offload) r.offloaded_handles.push_back(hash);
    std::sort(r.offloaded_handles.begin(), r.offloaded_handles.end());
  }
  return r;
}

bool churn_tracker::read_back(const std::string& trace, const std::string& hash, std::uint64_t turn,
                              std::uint32_t max_read_backs) {
  std::lock_guard lock(mutex_);
  auto it = traces_.find(trace);
  return it != traces_.end() && it->second.read_backs.note(hash, turn, max_read_backs);
}

void churn_tracker::note_offered(const std::string& trace) {
  std::lock_guard lock(mutex_);
  if (traces_.size() >= max_traces_ && !traces_.count(trace)) traces_.clear();  // bounded memory
  traces_[trace].offered = true;
}

}  // namespace gistproxy::rewrite
