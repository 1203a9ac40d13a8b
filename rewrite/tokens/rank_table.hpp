// A BPE encoding's mergeable tokens: bytes -> rank (lower ranks merge first),
// plus the pre-tokenisation pattern that goes with them. Parsed from the
// rank files scripts/gen-token-ranks writes (format described there); looked
// up by an open-addressing table over the data's own bytes (no per-token
// allocation, ~2 MiB for o200k_base).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::rewrite::tokens {

using rank = std::uint32_t;
inline constexpr rank no_rank = UINT32_MAX;

class rank_table {
 public:
  // Parses decompressed rank data; on malformed data returns nullopt and says
  // why in *error.
  static std::optional<rank_table> parse(std::string data, std::string* error);

  // The rank of these exact bytes, or no_rank if they are not one token.
  rank rank_of(std::string_view bytes) const;

  std::string_view name() const { return name_; }
  std::string_view pattern() const { return pattern_; }
  std::size_t size() const { return count_; }

 private:
  struct slot {
    std::uint32_t offset = 0;  // into data_
    std::uint32_t rank_and_length = 0;  // rank << 8 | length; 0 = empty
  };
  bool insert(std::uint32_t offset, std::uint8_t length, rank r);

  std::string data_;
  std::string name_, pattern_;  // copies: views into data_ would not survive a move of a short string
  std::size_t count_ = 0;
  std::vector<slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace gistproxy::rewrite::tokens
