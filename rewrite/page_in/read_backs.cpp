#include "rewrite/page_in/read_backs.hpp"

#include <algorithm>

namespace gistproxy::rewrite {

bool reads_back(std::uint64_t returned, std::uint64_t total) { return total > 0 && returned * 2 >= total; }

bool read_back_ledger::note(std::string_view hash, std::uint64_t turn, std::uint32_t max_read_backs, std::size_t room) {
  if (!max_read_backs) return false;
  auto it = counts_.find(hash);
  if (it == counts_.end()) {
    if (counts_.size() >= max_handles || 2 * record_bytes(hash) > room) return false;  // an entry, and its place inline
    it = counts_.emplace(std::string(hash), entry{}).first;
    bytes_ += record_bytes(hash);
  }
  auto& e = it->second;
  if (e.turns && e.last_turn == turn) return false;  // once a turn
  e.last_turn = turn;
  ++e.turns;
  if (rereader_) {
    if (e.turns > 1) return false;  // read back before it became one: inline already
    join(hash, turn);
    return true;
  }
  if (e.turns <= max_read_backs) return false;
  // The conversation re-reads: everything it read back goes inline, together.
  rereader_ = true;
  inline_.clear();
  inline_.reserve(counts_.size());
  for (const auto& [h, counted] : counts_) inline_.push_back(h), bytes_ += record_bytes(h);
  std::sort(inline_.begin(), inline_.end());
  joined_on_ = turn;
  return true;
}

void read_back_ledger::join(std::string_view hash, std::uint64_t turn) {
  inline_.insert(std::lower_bound(inline_.begin(), inline_.end(), hash, [](const std::string& a, std::string_view b) { return a < b; }),
                 std::string(hash));
  bytes_ += record_bytes(hash);
  joined_on_ = turn;
}

void read_back_ledger::fill(conversation_record& r, std::uint64_t latest_turn) const {
  r.inline_handles = inline_;
  r.batch_due = !inline_.empty() && joined_on_ == latest_turn;
  r.churning = rereader_;
}

}  // namespace gistproxy::rewrite
