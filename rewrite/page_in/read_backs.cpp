#include "rewrite/page_in/read_backs.hpp"

#include <algorithm>

namespace gistproxy::rewrite {

bool reads_back(std::uint64_t returned, std::uint64_t total) { return total > 0 && returned * 2 >= total; }

void read_back_ledger::shown_before(std::uint64_t turn, std::size_t count) {
  if (turn != turn_) turn_rereads_ = 0;
  turn_ = turn;
  turn_shown_ = count;  // a retry tells its turn again: the same count, not more
}

bool read_back_ledger::note(std::string_view hash, std::uint64_t turn, std::uint32_t max_read_backs, std::size_t room,
                            bool shown) {
  if (!max_read_backs) return false;
  auto it = counts_.find(hash);
  if (it == counts_.end()) {
    if (counts_.size() >= max_handles || 2 * record_bytes(hash) > room) return false;  // an entry, and its place inline
    it = counts_.emplace(std::string(hash), entry{}).first;
    bytes_ += record_bytes(hash);
  }
  auto& e = it->second;
  if (e.turns && e.last_turn == turn) return false;  // once a turn
  const bool reread = shown || e.turns > 0;
  e.last_turn = turn;
  ++e.turns;
  if (reread) ++e.rereads;
  if (rereader_) {
    if (e.inlined) return false;
    join(it->first, e, turn);
    return true;
  }
  if (!reread || e.rereads < max_read_backs) return false;
  if (turn > turn_) shown_before(turn, 0);  // never told: any re-read is most
  // A late note of an earlier turn (its hop outlived the next turn's start)
  // is weighed as a stray: that turn's count is gone.
  if (turn == turn_ && ++turn_rereads_ * 2 >= turn_shown_) {
    become_rereader(turn);
    return true;
  }
  if (e.rereads <= max_read_backs || e.inlined) return false;
  join(it->first, e, turn);  // a stray re-reader of this output alone
  return true;
}

// The turn re-reads most of what the model was shown: all this turn read
// back goes inline, together, and whatever it reads back later.
void read_back_ledger::become_rereader(std::uint64_t turn) {
  rereader_ = true;
  const auto before = inline_.size();
  for (auto& [h, e] : counts_)
    if (e.last_turn == turn && !e.inlined) inline_.push_back(h), e.inlined = true, bytes_ += record_bytes(h);
  std::sort(inline_.begin() + std::ptrdiff_t(before), inline_.end());
  std::inplace_merge(inline_.begin(), inline_.begin() + std::ptrdiff_t(before), inline_.end());
  joined_on_ = turn;
}

void read_back_ledger::join(const std::string& hash, entry& e, std::uint64_t turn) {
  inline_.insert(std::lower_bound(inline_.begin(), inline_.end(), hash), hash);
  e.inlined = true;
  bytes_ += record_bytes(hash);
  joined_on_ = turn;
}

void read_back_ledger::fill(conversation_record& r, std::uint64_t latest_turn) const {
  r.inline_handles = inline_;
  r.batch_due = !inline_.empty() && joined_on_ == latest_turn;
  r.churning = rereader_;
}

}  // namespace gistproxy::rewrite
