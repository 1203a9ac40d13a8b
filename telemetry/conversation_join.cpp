#include "telemetry/conversation_join.hpp"

namespace gistproxy::telemetry {

void conversation_join::offload(const std::string& handle, const std::string& tool, std::uint64_t turn) {
  auto it = first_offload_.find(handle);
  if (it == first_offload_.end()) {
    if (first_offload_.size() >= max_handles_) {
      ++handles_dropped_;
      return;
    }
    first_offload_.emplace(handle, first_seen{turn, tool});
    return;
  }
  // A turn-0 (unknown) offload is replaced by the first known one.
  if (turn && (it->second.turn == 0 || turn < it->second.turn)) it->second.turn = turn;
}

conversation_join::joined_page_in conversation_join::page_in(const std::string& handle, const std::string& tool,
                                                             std::uint64_t turn) const {
  joined_page_in j;
  j.tool = tool;
  auto off = first_offload_.find(handle);
  if (off == first_offload_.end()) return j;
  if (j.tool.empty()) j.tool = off->second.tool;
  const auto first = off->second.turn;
  if (first && turn >= first && turn - first <= churn_turns_) j.churn = churn_pair{handle, j.tool, first, turn};
  return j;
}

}  // namespace gistproxy::telemetry
