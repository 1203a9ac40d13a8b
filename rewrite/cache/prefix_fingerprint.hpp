// What a provider's prompt cache keys on, fingerprinted: the tools, the
// system prompt (or instructions) and each message in order. A turn whose
// prefix "extends" the previous turn's (same tools and system, and every
// earlier message again, unchanged) can be served from the cache; one that
// does not is a prefix break, and a break costs a cache write of everything
// after it. Anthropic's cache_control markers are left out: clients move
// them every turn and they do not change the cached content.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gistproxy::rewrite {

struct prefix_fingerprint {
  std::uint64_t head = 0;                 // tools + system / instructions
  std::vector<std::uint64_t> cumulative;  // [i]: messages 0..i, in order
};

// What is kept of a turn to judge the next: three numbers.
struct prefix_summary {
  std::uint64_t head = 0;
  std::uint32_t messages = 0;
  std::uint64_t all = 0;  // cumulative hash of every message (0 when none)
};

// Any API's request body (tools / system / instructions / systemInstruction;
// messages / input / contents). nullopt when the body is not a JSON object,
// or when it continues a conversation held by the provider
// (previous_response_id: the prefix is not in the body).
std::optional<prefix_fingerprint> fingerprint_prefix(std::string_view body);

prefix_summary summary_of(const prefix_fingerprint& fp);
// Whether `cur` keeps everything `prev` had, unchanged, at its start.
bool extends(const prefix_summary& prev, const prefix_fingerprint& cur);

}  // namespace gistproxy::rewrite
