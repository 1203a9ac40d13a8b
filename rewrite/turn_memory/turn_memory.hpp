// Remember what was decided: each conversation's last turn, so the next one
// (which re-sends it whole, plus a new tail) reuses the work done on the bytes
// both share instead of scanning, decoding and hashing them again.
//
// Nothing is reused on trust: a new body is compared byte for byte (memcmp)
// with the remembered body of the same tenant and API that shares the
// longest start with it, and only answers about values lying wholly inside
// the shared bytes are reused (walk_reuse.hpp for scanning and hashing,
// output_memo for decoding and SHA-256). A conversation that changed in the
// middle shares fewer bytes and reuses less; one that matches nothing takes
// the full path. The result is byte-identical either way.
//
// Bounded: remembered bodies count against max_bytes (least recently used
// conversations go first) and a tenant keeps at most per_tenant
// conversations. Tenants never see each other's turns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rewrite/endpoint.hpp"
#include "rewrite/json/walk_reuse.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/prompt_cache/prefix_fingerprint.hpp"

namespace gistproxy::rewrite {

// One turn as the proxy received and forwarded it, and what walking it learned.
struct remembered_turn {
  const endpoint* api = nullptr;
  std::string body;  // as received (after any Content-Encoding was decoded)
  json::walk_record body_walks;
  std::vector<output_memo> outputs;
  conversation_items items;  // what the offload scan found in each conversation item
  std::string forwarded;  // what went upstream, when it was not `body` itself
  // How `forwarded` was made: `body` with these spliced in, when edits_known
  // (the rewrite ran on the body that was compared and remembered).
  std::vector<splice_edit> forwarded_edits;
  bool edits_known = false;
  json::walk_record forwarded_walks;
  // The prefix check's items, as the client sent them and as forwarded
  // (a turn forwarded as received has only the first).
  prefix_memo client_prefix, forwarded_prefix;
  std::size_t bytes() const;
};

// The previous turn found for a new body, and how many bytes they share.
struct turn_match {
  std::shared_ptr<const remembered_turn> turn;
  std::size_t same_bytes = 0;
};

struct turn_memory_stats {
  std::uint64_t conversations = 0, bytes = 0, evictions = 0;
};

class turn_memory {
 public:
  struct limits {
    std::size_t max_bytes = std::size_t(256) << 20;
    std::size_t per_tenant = 64;
  };
  explicit turn_memory(limits l);

  // The remembered turn of this tenant and API sharing the longest start
  // with `body` (none: turn is null).
  turn_match find(std::string_view tenant, const endpoint& api, std::string_view body) const;
  // Files `turn` as the latest turn of a conversation (the trace id names it).
  void remember(std::string_view tenant, std::string_view conversation, std::shared_ptr<const remembered_turn> turn);
  turn_memory_stats stats() const;

  // Conversations compared with a new body: those whose last turn opened
  // with the same bytes, most recent first.
  static constexpr std::size_t candidates = 16;
  static constexpr std::size_t opening_bytes = 256;

 private:
  struct entry {
    std::string tenant;
    std::string bucket;
    std::shared_ptr<const remembered_turn> turn;
    std::size_t bytes = 0;                 // turn->bytes(), counted once
    std::list<std::string>::iterator lru;  // into lru_, by key
  };
  static std::string bucket_of(std::string_view tenant, const endpoint& api, std::string_view body);
  void forget(const std::string& key);
  void evict(const std::string& tenant);

  limits limits_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, entry> entries_;                      // tenant '\0' conversation
  std::unordered_map<std::string, std::vector<std::string>> buckets_;  // opening → entry keys, most recent first
  std::unordered_map<std::string, std::size_t> per_tenant_;
  mutable std::list<std::string> lru_;  // most recent first
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace gistproxy::rewrite
