// Which conversation a request belongs to, from what it says and whose it is,
// never from what the client labels it with (a W3C traceparent names a trace,
// and an instrumented client starts a fresh one every turn).
//
// The opening (API, system prompt, first user message, hashed with the
// tenant's credential) names a family of conversations. Inside it, a turn
// belongs to the conversation whose latest turn it extends: same head, and
// every item of that turn again, unchanged, in order (the chain of prefixes
// each turn extends). Of several, the longest wins. A turn that sends exactly
// the latest turn again is a retry: the same turn, not a new one (a retry that
// pages the same output in again is not a re-read). A turn that extends none
// starts a new conversation (a second run of the same task), unless it is
// at least as long as some conversation's latest turn and keeps, beyond what
// that conversation's first turn sent, its first item: a run's first turn is
// what every run of the task sends, and the item after it (the model's first
// answer, with its call ids) is the run's own. So a client that edits or
// clears earlier outputs goes on in its conversation, and a second run, whose
// first answer differs, does not.
// The first conversation of an opening is named by the opening itself, so a
// conversation that is never split keeps the id every replica and a restart
// give it; later ones are derived from the opening and their order.
//
// Pure logic, bounded: at most `max_openings` openings (least recently used
// forgotten first) and `max_chains` conversations under one opening. A
// forgotten conversation's next turn starts afresh under the opening's id.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gistproxy::rewrite {

using conversation_id = std::array<std::uint8_t, 16>;

// Where a turn stands: its head's hash and the cumulative hash of its items
// (prefix_fingerprint's; [i] covers items 0..i).
struct turn_position {
  std::uint64_t head = 0;
  std::span<const std::uint64_t> cumulative;
};

// An opening's id: the first 16 bytes of SHA-256 over the conversation key
// (request_facts), a NUL and the credential (none in traces that do not keep
// one). Never all zero (an invalid W3C trace id).
conversation_id opening_of(std::string_view conversation_key, std::string_view credential = {});
// The same from the key and credential already joined by that NUL.
conversation_id opening_of_joined(std::string_view joined);
// 32 lowercase hex digits (a W3C trace id's form), and back: nullopt for
// anything else (a recording is a file from outside).
std::string conversation_hex(const conversation_id& id);
std::optional<conversation_id> conversation_from_hex(std::string_view hex);

struct conversation_turn {
  conversation_id id{};
  bool retry = false;     // the conversation's latest turn sent again
  bool branched = false;  // a new conversation under an opening that had one
};

class conversation_chains {
 public:
  explicit conversation_chains(std::size_t max_openings = 65536, std::size_t max_chains = 32);

  // The conversation of a turn opened by `opening`. A turn with no items to
  // chain (the provider holds the conversation, or it could not be read) is
  // the opening's own conversation, never a retry.
  conversation_turn resolve(const conversation_id& opening, const turn_position& turn);

  std::size_t openings();

 private:
  struct chain {
    conversation_id id{};
    std::uint64_t head = 0;
    std::size_t items = 0;
    std::uint64_t all = 0;  // cumulative hash of its latest turn's items
    std::size_t first_items = 0;  // what its first turn sent
    std::uint64_t anchor = 0;     // cumulative hash through the item after those (once it has one)
    std::uint64_t used = 0;
  };
  struct opening_state {
    std::vector<chain> chains;
    std::uint64_t made = 0;  // conversations started under it, for their ids
    std::list<conversation_id>::iterator lru;
  };
  struct id_hash {
    std::size_t operator()(const conversation_id& k) const;
  };
  opening_state& touch(const conversation_id& opening);
  static chain* longest_extended(opening_state& s, const turn_position& turn);
  static chain* longest_edited(opening_state& s, const turn_position& turn);
  chain& start(opening_state& s, const conversation_id& opening);

  std::mutex mutex_;
  std::size_t max_openings_;
  std::size_t max_chains_;
  std::uint64_t clock_ = 0;
  std::unordered_map<conversation_id, opening_state, id_hash> openings_;
  std::list<conversation_id> lru_;  // most recently used first
};

}  // namespace gistproxy::rewrite
