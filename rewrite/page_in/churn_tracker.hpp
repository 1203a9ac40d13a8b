// Paging churn: a blob paged back in the same or the next turn of the
// conversation that offloaded it belonged in the window. The tracker keeps,
// per trace, a turn counter and the turn each handle was first offloaded,
// and what the trace's earlier turns decided that later ones keep
// (conversation_record.hpp); in memory (a restart forgets, which
// under-counts churn and lets the next turn decide afresh), under a byte
// bound: past it the least recently used conversation is forgotten, never
// all at once, so the live ones keep what they decided (read_blob offered,
// outputs inline). One conversation holds at most an eighth of the bound.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rewrite/blob/digest.hpp"
#include "rewrite/offload/conversation_record.hpp"
#include "rewrite/page_in/read_backs.hpp"

namespace gistproxy::rewrite {

class churn_tracker {
 public:
  static constexpr std::size_t default_max_bytes = std::size_t(64) << 20;
  explicit churn_tracker(std::size_t max_bytes = default_max_bytes);
  // A new request (turn) of this trace; returns its 1-based turn number. A
  // retry (the latest turn sent again) is that turn again: what it reads back
  // is not read back on another turn.
  std::uint64_t begin_turn(const std::string& trace, bool retry = false);
  // Notes a turn's offloads; the first turn each handle was offloaded in is
  // kept. first[i]: hashes[i] is new to the trace (the live view details only
  // those). aged[i] (if given): hashes[i] went for its age, so the model saw
  // it inline before. `repeated`: the turn's other offloads, made by the
  // previous turn too (not in hashes). The references the model was shown
  // on an earlier turn are what a turn's re-reads are weighed against
  // (read_back_ledger). All at once, as a long conversation re-offloads a
  // few hundred outputs every turn: one lock and one trace lookup.
  void offloaded(const std::string& trace, std::span<const std::string_view> hashes, std::uint64_t turn,
                 std::vector<bool>& first, std::size_t repeated = 0, std::span<const std::uint8_t> aged = {});
  // Turns between the handle's first offload and `turn`, if it was offloaded in this trace.
  std::optional<std::uint64_t> turns_since_offload(const std::string& trace, const std::string& hash,
                                                   std::uint64_t turn);

  // What the trace's earlier turns decided that its next turn keeps.
  conversation_record record(const std::string& trace);
  // A turn of the trace went upstream with read_blob on offer: later turns offer it too.
  void note_offered(const std::string& trace);
  // The turn that offered it first took it back (its page-in hop sent every
  // output it read back inline, and nothing was left to read): later turns
  // offer it only if they choose to anew.
  void withdraw_offer(const std::string& trace);
  // `turn` of the trace read `hash` back (reads_back); true when that made
  // it stay inline from the next turn on (read_back_ledger::note). A hash
  // offloaded on an earlier turn, or for its age, was shown before.
  bool read_back(const std::string& trace, const std::string& hash, std::uint64_t turn, std::uint32_t max_read_backs);

  // What the records hold (record_bytes), and how many conversations.
  std::size_t bytes();
  std::size_t conversations();

 private:
  struct trace_state {
    std::uint64_t turns = 0;
    bool offered = false;
    read_back_ledger read_backs;
    struct offload_turn {
      std::uint64_t turn = 0;  // the first it was offloaded on
      bool aged = false;       // then for its age: the model saw it inline before
    };
    std::unordered_map<std::string, offload_turn, handle_key_hash, std::equal_to<>> first_offload;
    std::size_t handle_bytes = 0;                // first_offload's, counted
    // first_offload's handles sorted, as a churning conversation's records
    // hand them out: made once, shared by every later turn's record, dropped
    // when a handle is added (a churning conversation adds none: its new
    // outputs stay inline). Counted as handle_bytes again while it lives.
    std::shared_ptr<const std::vector<std::string>> offloaded_sorted;
    std::size_t counted = 0;                     // what bytes_ holds for it
    std::list<const std::string*>::iterator use;  // its place in lru_
  };
  // The trace's state, made if new, and now the most recently used; or null.
  trace_state& touch(const std::string& trace);
  trace_state* touch_existing(const std::string& trace);
  // Counts the state's bytes again, then forgets the least recently used
  // others while the whole is over the bound.
  void settle(trace_state& s);
  std::size_t own_bytes(const std::string& trace, const trace_state& s) const;

  std::mutex mutex_;
  std::unordered_map<std::string, trace_state> traces_;
  trace_state scratch_;               // what touch answers for a key too long to keep
  std::list<const std::string*> lru_;  // keys of traces_ (stable), most recently used first
  std::size_t bytes_ = 0;
  std::size_t max_bytes_;
  std::size_t max_trace_bytes_;
};

}  // namespace gistproxy::rewrite
