// What a conversation's earlier turns decided that its later turns keep, so
// that a client editing its history (clearing an output it no longer needs)
// never makes a decision flip back and rewrite the cached prefix:
//  - read_blob, once a forwarded turn offered it, stays offered;
//  - once a turn re-reads half of what the model was shown before, what it
//    read back, and every new output, stays inline; a stray re-read keeps
//    that output inline (paging churn, read_backs.hpp).
// The proxy keeps one per conversation (its trace id, which every replica
// derives alike from the conversation's opening) and hands it to the engine
// with each turn; the engine only reads it.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::rewrite {

struct conversation_record {
  bool offered = false;  // an earlier turn went upstream with read_blob on offer
  // SHA-256 hex of the outputs that stay inline for their read-backs, sorted.
  std::vector<std::string> inline_handles;
  // Some joined inline_handles on the conversation's latest turn: the first
  // turn that keeps them inline breaks the prefix there, on purpose.
  bool batch_due = false;
  // The conversation re-reads what was offloaded (a turn re-read half of
  // what the model was shown before): an output it never offloaded
  // (offloaded_handles, sorted, filled only then) stays inline too, as the
  // model would read it back as well. Nothing forwarded before changes:
  // those outputs were inline.
  bool churning = false;
  std::shared_ptr<const std::vector<std::string>> offloaded_handles;  // shared: thousands, the same every turn

  bool keeps_inline(std::string_view hash) const {
    return holds(inline_handles, hash) || (churning && !(offloaded_handles && holds(*offloaded_handles, hash)));
  }

 private:
  static bool holds(const std::vector<std::string>& sorted, std::string_view hash) {
    return std::binary_search(sorted.begin(), sorted.end(), hash, [](std::string_view a, std::string_view b) { return a < b; });
  }
};

}  // namespace gistproxy::rewrite
