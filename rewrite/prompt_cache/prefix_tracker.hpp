// Prompt-cache health, live: per conversation, the previous turn's prefix as
// the client sent it and as gistproxy forwarded it. When a turn's forwarded
// prefix does not extend the previous one, the break is attributed: to the
// client when its own body did not extend its previous one either (not our
// doing); else to gistproxy: to what it meant to do on this turn (budget-mode
// eviction, an age-aware batch, read_blob's late arrival under the cost
// model), otherwise to a defect. Bounded: an LRU over
// conversations, split into stripes so that I/O threads rarely share a lock.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rewrite/prompt_cache/prefix_fingerprint.hpp"

namespace gistproxy::rewrite {

enum class prefix_verdict {
  first_turn,    // nothing to compare with (or the conversation was forgotten)
  extended,      // the forwarded prefix extends the previous turn's
  client_break,  // the client's own body broke it
  proxy_break,   // only gistproxy's rewrite broke it: a defect
  budget_break,  // gistproxy broke it by evicting outputs in budget mode
  age_break,     // gistproxy broke it by offloading a batch of older outputs (age-aware offload)
  offer_break,   // gistproxy broke it by offering read_blob once offloading paid (--inject-read-blob=auto)
  churn_break,   // gistproxy broke it by putting outputs the model kept reading back inline again
  unknown,       // a body that could not be fingerprinted
};

// Metric label (gistproxy_prefix_breaks_total{cause}); empty for non-breaks.
std::string_view break_cause(prefix_verdict v);

// What this turn's rewrite did that may change an earlier part of the
// conversation on purpose (the verdict a break gets when the client's own
// body did not break it).
enum class planned_break : std::uint8_t { none, budget, age, offer, churn };

class prefix_tracker {
 public:
  explicit prefix_tracker(std::size_t max_conversations = 65536);

  // One turn of `conversation` (its trace id). `forwarded` is nullopt when
  // the body went upstream as sent (then it is the client's).
  prefix_verdict observe(std::string_view conversation, const std::optional<prefix_fingerprint>& client,
                         const std::optional<prefix_fingerprint>& forwarded, planned_break planned);

 private:
  struct turn {
    prefix_summary client, forwarded;
  };
  // A conversation's id: its 16-byte trace id (longer names are hashed down).
  using key = std::array<unsigned char, 16>;
  struct key_hash {
    std::size_t operator()(const key& k) const;
  };
  static key key_of(std::string_view conversation);
  struct stripe {
    std::mutex mutex;
    std::list<key> order;  // most recent first
    std::unordered_map<key, std::pair<turn, std::list<key>::iterator>, key_hash> turns;
  };
  static constexpr std::size_t stripes = 16;
  std::array<stripe, stripes> stripes_;
  std::size_t per_stripe_;
};

}  // namespace gistproxy::rewrite
