#include "rewrite/page_in/churn_tracker.hpp"

#include <algorithm>

namespace gistproxy::rewrite {

namespace {

constexpr std::size_t max_handles_per_trace = 10000;

}  // namespace

churn_tracker::churn_tracker(std::size_t max_bytes)
    : max_bytes_(max_bytes), max_trace_bytes_(std::max<std::size_t>(max_bytes / 8, 1)) {}

std::size_t churn_tracker::own_bytes(const std::string& trace, const trace_state& s) const {
  // The key in the map and its place in the list, the state, and what it holds.
  return record_bytes(trace) + sizeof(trace_state) + 4 * sizeof(void*) + s.handle_bytes * (s.offloaded_sorted ? 2 : 1) +
         s.read_backs.bytes();
}

churn_tracker::trace_state* churn_tracker::touch_existing(const std::string& trace) {
  auto it = traces_.find(trace);
  if (it == traces_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.use);
  return &it->second;
}

churn_tracker::trace_state& churn_tracker::touch(const std::string& trace) {
  if (auto* s = touch_existing(trace)) return *s;
  if (record_bytes(trace) + sizeof(trace_state) + 4 * sizeof(void*) > max_trace_bytes_) {
    scratch_ = {};  // a key too long to keep: its turn is answered, and forgotten
    return scratch_;
  }
  auto it = traces_.try_emplace(trace).first;
  lru_.push_front(&it->first);
  it->second.use = lru_.begin();
  settle(it->second);
  return it->second;
}

void churn_tracker::settle(trace_state& s) {
  if (&s == &scratch_) return;
  const auto& key = **s.use;
  bytes_ -= s.counted;
  s.counted = own_bytes(key, s);
  bytes_ += s.counted;
  while (bytes_ > max_bytes_ && lru_.size() > 1 && lru_.back() != &key) {
    auto victim = traces_.find(*lru_.back());
    bytes_ -= victim->second.counted;
    lru_.pop_back();
    traces_.erase(victim);
  }
}

std::uint64_t churn_tracker::begin_turn(const std::string& trace, bool retry) {
  std::lock_guard lock(mutex_);
  auto& s = touch(trace);
  return retry && s.turns ? s.turns : ++s.turns;
}

void churn_tracker::offloaded(const std::string& trace, std::span<const std::string_view> hashes, std::uint64_t turn,
                              std::vector<bool>& first, std::size_t repeated, std::span<const std::uint8_t> aged) {
  first.assign(hashes.size(), false);
  if (hashes.empty() && !repeated) return;
  std::lock_guard lock(mutex_);
  auto& s = touch(trace);
  auto& handles = s.first_offload;
  std::size_t shown = repeated;
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    // A hash seen before (most, every turn) costs a lookup, not a node built and thrown away.
    const auto hash = hashes[i];
    const bool went_aged = i < aged.size() && aged[i] != 0;
    if (auto h = handles.find(hash); h != handles.end()) {
      shown += h->second.turn < turn || h->second.aged || went_aged;
      continue;
    }
    shown += went_aged;
    if (handles.size() >= max_handles_per_trace) continue;
    if (own_bytes(trace, s) + record_bytes(hash) > max_trace_bytes_) continue;  // a conversation holds its share
    handles.emplace(std::string(hash), trace_state::offload_turn{turn, went_aged});
    s.handle_bytes += record_bytes(hash);
    s.offloaded_sorted.reset();
    first[i] = true;
  }
  s.read_backs.shown_before(turn, shown);
  settle(s);
}

std::optional<std::uint64_t> churn_tracker::turns_since_offload(const std::string& trace, const std::string& hash,
                                                                std::uint64_t turn) {
  std::lock_guard lock(mutex_);
  auto* s = touch_existing(trace);
  if (!s) return std::nullopt;
  auto h = s->first_offload.find(hash);
  if (h == s->first_offload.end()) return std::nullopt;
  return turn >= h->second.turn ? turn - h->second.turn : 0;
}

conversation_record churn_tracker::record(const std::string& trace) {
  conversation_record r;
  std::lock_guard lock(mutex_);
  auto* s = touch_existing(trace);
  if (!s) return r;
  r.offered = s->offered;
  s->read_backs.fill(r, s->turns);
  if (r.churning) {
    if (!s->offloaded_sorted) {
      auto sorted = std::make_shared<std::vector<std::string>>();
      sorted->reserve(s->first_offload.size());
      for (const auto& [hash, turn] : s->first_offload) sorted->push_back(hash);
      std::sort(sorted->begin(), sorted->end());
      s->offloaded_sorted = std::move(sorted);
      settle(*s);
    }
    r.offloaded_handles = s->offloaded_sorted;
  }
  return r;
}

bool churn_tracker::read_back(const std::string& trace, const std::string& hash, std::uint64_t turn,
                              std::uint32_t max_read_backs) {
  std::lock_guard lock(mutex_);
  auto* s = touch_existing(trace);
  if (!s) return false;
  const auto used = own_bytes(trace, *s);
  const auto h = s->first_offload.find(hash);
  const bool shown = h != s->first_offload.end() && (h->second.turn < turn || h->second.aged);
  const bool joined =
      s->read_backs.note(hash, turn, max_read_backs, max_trace_bytes_ > used ? max_trace_bytes_ - used : 0, shown);
  settle(*s);
  return joined;
}

void churn_tracker::note_offered(const std::string& trace) {
  std::lock_guard lock(mutex_);
  touch(trace).offered = true;
}

void churn_tracker::withdraw_offer(const std::string& trace) {
  std::lock_guard lock(mutex_);
  if (auto* s = touch_existing(trace)) s->offered = false;
}

std::size_t churn_tracker::bytes() {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::size_t churn_tracker::conversations() {
  std::lock_guard lock(mutex_);
  return traces_.size();
}

}  // namespace gistproxy::rewrite
