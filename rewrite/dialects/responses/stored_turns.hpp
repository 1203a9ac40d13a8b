// Which stored Responses turns gistproxy changed, and how (stored_turn), per
// tenant and by the id the client holds: reads of them and later turns
// chaining on them (previous_response_id) are shown and sent as the
// client's (responses_stored.hpp). Kept in memory: a restart or another
// replica has not seen a turn, and reads of it are then relayed as sent.
//
// Bounded: at most max_turns turns and max_bytes in all (the least
// recently used go first); a turn costing more than max_turn_bytes is not
// kept. Tenants never see each other's turns. Thread-safe.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rewrite/dialects/responses/responses_stored.hpp"

namespace gistproxy::rewrite {

class stored_turns {
 public:
  struct limits {
    std::size_t max_turns = std::size_t(1) << 16;
    std::size_t max_bytes = std::size_t(32) << 20;
    std::size_t max_turn_bytes = std::size_t(16) << 10;
  };
  explicit stored_turns(limits l);

  // Keeps (or replaces) the turn the client knows as `client_id`.
  void remember(std::string_view tenant, std::string_view client_id, stored_turn turn);
  std::optional<stored_turn> find(std::string_view tenant, std::string_view client_id);
  // Whether `call_id` is a read_blob call of a turn of the tenant's.
  bool read_call(std::string_view tenant, std::string_view call_id) const;
  // How many items of gistproxy's a listing of this turn's input may hold:
  // its own and those of the turns it chains on (at most `depth` back).
  std::size_t hidden_in_chain(std::string_view tenant, std::string_view client_id, std::size_t depth = 256) const;
  std::size_t size() const;
  std::size_t bytes() const;

 private:
  struct entry {
    stored_turn turn;
    std::list<std::string>::iterator recency;
    std::size_t bytes = 0;  // the turn's and its key's
  };
  static std::string key(std::string_view tenant, std::string_view id);
  void forget_calls(std::string_view tenant, const stored_turn& turn);
  void erase(std::unordered_map<std::string, entry>::iterator it);
  void evict();

  const limits limits_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, entry> turns_;
  std::list<std::string> recency_;  // most recently used first
  std::size_t bytes_ = 0;
  std::unordered_map<std::string, std::size_t> read_calls_;  // key(tenant, call_id) → turns naming it
};

}  // namespace gistproxy::rewrite
