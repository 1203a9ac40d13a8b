// The join behind `gistproxy report` and the admin listener's live view: one
// conversation's offloads and page-ins, fed turn by turn, give each page-in
// its tool (from the offload when the page-in does not name it) and its churn
// pair (a blob paged back within `churn_turns` turns of its first offload).
// Both callers feed it in turn order (turn 0: turn unknown), so one rule
// decides churn offline and live. Pure logic; bounded by `max_handles`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace gistproxy::telemetry {

struct churn_pair {
  std::string handle;
  std::string tool;
  std::uint64_t offload_turn = 0;  // 1-based turn of the first offload in this conversation
  std::uint64_t page_in_turn = 0;
  std::uint64_t turns_between() const { return page_in_turn - offload_turn; }
};

class conversation_join {
 public:
  explicit conversation_join(std::uint64_t churn_turns = 1, std::size_t max_handles = SIZE_MAX)
      : churn_turns_(churn_turns), max_handles_(max_handles) {}

  // An offload of `handle` in `turn` (0: unknown). The earliest known turn is
  // kept; past `max_handles` distinct handles new ones are counted, not kept.
  void offload(const std::string& handle, const std::string& tool, std::uint64_t turn);

  struct joined_page_in {
    std::string tool;                // the page-in's, else its offload's
    std::optional<churn_pair> churn;  // when it churned
  };
  joined_page_in page_in(const std::string& handle, const std::string& tool, std::uint64_t turn) const;

  std::size_t handles() const { return first_offload_.size(); }
  std::uint64_t handles_dropped() const { return handles_dropped_; }

 private:
  struct first_seen {
    std::uint64_t turn = 0;
    std::string tool;
  };
  std::uint64_t churn_turns_;
  std::size_t max_handles_;
  std::uint64_t handles_dropped_ = 0;
  std::unordered_map<std::string, first_seen> first_offload_;
};

}  // namespace gistproxy::telemetry
