// A BPE encoding's mergeable tokens and the pre-tokenisation pattern that goes
// with them, parsed from the rank files scripts/gen-token-ranks writes (format
// described there). Compact on purpose — the table is resident in every
// proxy: one 32-bit slot per 2/3 of a token (the token's offset in the rank
// data, plus 11 bits of its hash to skip most mismatches without touching the
// data), over the data itself. About 1.2 MB for o200k_base beside its 1.6 MB
// of data, which the built-in encodings read in place from the binary. Two-byte
// tokens are also in a direct table (256 KB): every merge starts by looking up
// each adjacent pair of a piece, and a probe of the large table is a cache
// miss when it has gone cold between requests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::rewrite::tokens {

// Orders tokens as their ranks do (lower merges first). Not the rank itself:
// the token's offset in the rank data, which grows with the rank.
using rank = std::uint32_t;
inline constexpr rank no_rank = UINT32_MAX;

class rank_table {
 public:
  // Parses rank data it keeps a copy of; nullptr and *error when malformed.
  static std::unique_ptr<rank_table> parse(std::string data, std::string* error);
  // The same over data that outlives the table (the binary's own).
  static std::unique_ptr<rank_table> parse_static(std::string_view data, std::string* error);
  rank_table(const rank_table&) = delete;
  rank_table& operator=(const rank_table&) = delete;

  // These exact bytes' merge order, or no_rank if they are not one token.
  rank rank_of(std::string_view bytes) const;

  std::string_view name() const { return name_; }
  std::string_view pattern() const { return pattern_; }
  std::size_t size() const { return count_; }

 private:
  rank_table() = default;
  bool build(std::string* error);
  bool insert(std::uint32_t offset, std::uint64_t hash);
  std::size_t slot_of(std::uint64_t hash) const { return std::size_t(((hash >> 32) * slots_.size()) >> 32); }

  std::string owned_;
  std::string_view data_;
  std::string_view name_, pattern_;  // views into data_
  std::size_t count_ = 0;
  std::vector<std::uint32_t> slots_;  // 0 = empty; else tag << 21 | offset of the token's bytes
  std::vector<rank> pairs_;           // by first byte << 8 | second: each two-byte token's rank
};

}  // namespace gistproxy::rewrite::tokens
