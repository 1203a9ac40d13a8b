// What a provider's prompt cache keys on, fingerprinted: the request members
// before the conversation (tools, the system prompt or instructions) and each
// conversation item in order. Which members those are is the API's to say:
// each wire format declares its prefix_layout, and the live prefix check (serve)
// and replay's prefix stability and simulated cache both read bodies through
// this one model.
//
// A turn whose prefix "extends" the previous turn's (same head, and every
// earlier item again, unchanged) can be served from the cache; one that does
// not is a prefix break, and a break costs a cache write of everything after
// it. Cache markers the API declares (cache_marker) are left out: clients
// move them every turn and they do not change the cached content; so are
// blocks that are not prompt (uncached_text).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {

// Which request members make up an API's cached prefix, in the order the
// provider caches them.
struct prefix_layout {
  static constexpr std::size_t max_head = 3;
  // Members before the conversation (unused slots empty). Where an API takes
  // one member under two spellings (Gemini's systemInstruction and
  // system_instruction), both are listed: a body carries one of them.
  std::array<std::string_view, max_head> head{};
  std::string_view conversation;  // the conversation list: messages, input, contents
  // A member that, when present and not null, means the provider holds the
  // conversation (Responses' previous_response_id): the prefix is not in the body.
  std::string_view provider_state;
  // A member clients move every turn that the cached content does not depend
  // on (Anthropic's cache_control breakpoints), left out at any depth; an
  // array element holding only it (Converse's {"cachePoint":{…}} blocks) is
  // left out of its array whole.
  std::string_view cache_marker;
  // A text block of a head member that is not prompt: an array element
  // holding a "text" string that begins with this is left out of its array
  // whole. Claude
  // Code's first system block, "x-anthropic-billing-header: …; cch=…;",
  // differs on every request; the provider takes it out before caching.
  std::string_view uncached_text;
};

// One part of a body's prefix: its hash (cache_control left out) and where
// its JSON value lies in the body.
struct prefix_part {
  std::uint64_t hash = 0;
  json::range at;
};

// A body's prefix, part by part (what replay prices).
struct prefix_parts {
  std::array<std::optional<prefix_part>, prefix_layout::max_head> head;  // by layout slot; nullopt: absent
  bool has_conversation = false;
  std::vector<prefix_part> items;  // a conversation that is not an array counts as one item
  bool provider_held = false;      // the provider holds the conversation: items say nothing of the cache
};

std::optional<prefix_parts> split_prefix(json::document body, const prefix_layout& layout);

// Whether `cur` sends again, unchanged, every head member and every item of
// `prev` (a provider-held conversation: the head alone).
bool keeps_prefix(const prefix_parts& prev, const prefix_parts& cur);
// What of `cur`'s prefix is shared with `prev`, in cache order (head members,
// then items up to the first change), each of cur's parts measured by `measure`.
std::uint64_t shared_prefix(const prefix_parts& prev, const prefix_parts& cur,
                            const std::function<std::uint64_t(json::range)>& measure);

struct prefix_fingerprint {
  std::uint64_t head = 0;                 // every head member, in layout order
  std::vector<std::uint64_t> cumulative;  // [i]: items 0..i, in order
};

// What is kept of a turn to judge the next: three numbers.
struct prefix_summary {
  std::uint64_t head = 0;
  std::uint32_t messages = 0;
  std::uint64_t all = 0;  // cumulative hash of every item (0 when none)
};

// What fingerprinting one body learned for the next turn's: where the
// conversation list opened, where each of its items ended and the running
// hashes. The next body, sharing its first bytes with this one, takes every
// item lying wholly in those bytes from here instead of walking them: the same
// bytes at the same offsets hold the same items with the same hashes.
struct prefix_memo {
  std::size_t list_begin = std::string_view::npos;  // npos: no list remembered
  std::vector<std::size_t> item_ends;
  std::vector<std::uint64_t> cumulative;
  void clear() {
    list_begin = std::string_view::npos;
    item_ends.clear();
    cumulative.clear();
  }
  std::size_t bytes() const { return item_ends.capacity() * sizeof(std::size_t) + cumulative.capacity() * 8; }
};

struct prefix_reuse {
  const prefix_memo* previous = nullptr;  // the previous body's memo (may be null)
  std::size_t same_bytes = 0;             // bytes this body shares with that one, compared byte for byte
  prefix_memo* learn = nullptr;           // where this body's memo goes (may be null)
};

// nullopt when the body is not a JSON object of that layout's shape, or when
// the provider holds the conversation.
std::optional<prefix_fingerprint> fingerprint_prefix(json::document body, const prefix_layout& layout,
                                                     const prefix_reuse& reuse = {});

prefix_summary summary_of(const prefix_fingerprint& fp);
// Whether `cur` keeps everything `prev` had, unchanged, at its start.
bool extends(const prefix_summary& prev, const prefix_fingerprint& cur);

// The running hash fingerprints keep of items 0..i, given 0..i-1's and item i's.
std::uint64_t chain_hash(std::uint64_t previous, std::uint64_t item);

}  // namespace gistproxy::rewrite
