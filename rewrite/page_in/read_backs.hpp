// Paging churn that acts, decided per conversation. A read-back is a
// re-read when the model was shown the output on an earlier turn: as a
// reference it did not read then, inline before age offloaded it, or read
// back before. A turn whose re-reads reach half of the outputs the model was
// shown before makes the conversation a re-reader: what that turn reads back,
// and everything it reads back later, stays inline from the next turn on, and
// its new outputs are never offloaded (conversation_record::churning). A
// stray re-read (most outputs shown before not re-read) keeps only that
// output inline, from its second re-read on: a model that reads each output
// once, and one of them late, keeps every other saving. Pure bookkeeping, one
// conversation's; the churn tracker keeps one per trace and locks around it.
//
// Why on the first re-read: with the page-in hop hidden from the client, an
// output read back is written to the provider's cache again on every turn
// that reads it, and once more on the turn that puts it back inline. Each
// turn of waiting pays that for every output offloaded before; deciding on
// the turn the model first re-reads most of them pays it once.
//
// Batched for the prompt cache: outputs join the inline set together, all of
// one turn's, and the next turn takes them in one go (one break of the
// cached prefix, at the earliest of them, planned and counted as
// cause="churn"). The proxy takes them sooner where it can: the page-in hop
// whose read-backs made them join asks the model again with them inline
// (turn_with_rereads_inline), so that break is paid once, in the hop. An
// output is read back at most once per turn, however many pages or calls
// that turn took.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rewrite/blob/digest.hpp"
#include "rewrite/offload/conversation_record.hpp"

namespace gistproxy::rewrite {

// A turn that paged `returned` bytes of a blob of `total` read it back when
// that is at least half of it.
bool reads_back(std::uint64_t returned, std::uint64_t total);

// The memory an entry keyed by `key` takes in a node-based map or a vector
// of strings, counted generously: the key's bytes, the string and node
// headers, and the bucket. Bounds on records are in these bytes.
constexpr std::size_t record_bytes(std::string_view key) {
  return key.size() + sizeof(std::string) + 4 * sizeof(void*) + sizeof(std::uint64_t) * 2;
}

class read_back_ledger {
 public:
  // `turn` sends `count` references the model was shown on an earlier turn
  // (what "most" is measured against; a turn never told counts none, and
  // any re-read on it is most).
  void shown_before(std::uint64_t turn, std::size_t count);
  // `hash` was read back on `turn`; `shown` says the model was shown it on
  // an earlier turn (a reference, or inline before age offloaded it); a hash
  // read back on an earlier turn was shown too. True when this made some
  // output stay inline: the conversation became a re-reader, was one already
  // and this output was not inline yet, or this output's re-reads exceed
  // `max_read_backs` (0: never; an output counts toward "most" from its
  // max_read_backs-th re-read). A hash new to the ledger is noted only if
  // its entries fit in `room` bytes.
  bool note(std::string_view hash, std::uint64_t turn, std::uint32_t max_read_backs,
            std::size_t room = std::size_t(-1), bool shown = false);
  // The outputs that stay inline, and whether some joined on `latest_turn`
  // (the turn before the one the record is for).
  void fill(conversation_record& r, std::uint64_t latest_turn) const;
  bool rereader() const { return rereader_; }
  std::size_t size() const { return counts_.size(); }
  // What its entries hold, counted as record_bytes counts them.
  std::size_t bytes() const { return bytes_; }

 private:
  struct entry {
    std::uint32_t turns = 0;      // turns it was read back on
    std::uint32_t rereads = 0;    // of them, after the model was shown it
    std::uint64_t last_turn = 0;  // the latest of them
    bool inlined = false;         // in inline_
  };
  static constexpr std::size_t max_handles = 10000;  // bounded, like the tracker's handles
  std::unordered_map<std::string, entry, handle_key_hash, std::equal_to<>> counts_;
  void join(const std::string& hash, entry& e, std::uint64_t turn);
  void become_rereader(std::uint64_t turn);

  bool rereader_ = false;            // the conversation reads back what was offloaded
  std::vector<std::string> inline_;  // sorted
  std::uint64_t joined_on_ = 0;      // the turn the latest joined on
  std::uint64_t turn_ = 0;           // the turn the next two count for
  std::size_t turn_shown_ = 0;       // references shown before, sent on turn_
  std::size_t turn_rereads_ = 0;     // outputs re-read on turn_ (counting toward most)
  std::size_t bytes_ = 0;
};

}  // namespace gistproxy::rewrite
