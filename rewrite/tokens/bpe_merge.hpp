// Byte-pair merging of one pre-tokenised piece, exactly as tiktoken does it:
// start from single bytes and repeatedly merge the adjacent pair whose
// concatenation has the lowest rank (the leftmost one on a tie) until no
// adjacent pair is a token. Short pieces use tiktoken's own quadratic scan;
// long ones (a hostile megabyte of one character class is one piece) a heap
// with lazy deletion, O(n log n), which merges in the same order.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "rewrite/tokens/rank_table.hpp"

namespace gistproxy::rewrite::tokens {

// Reused buffers: one per counting call, so a piece costs no allocation.
struct merge_scratch {
  struct part {
    std::uint32_t start;
    rank pair_rank;  // rank of this part joined with the next one
  };
  std::vector<part> parts;
  struct node {
    std::uint32_t start, prev, next, version;
  };
  std::vector<node> nodes;
  struct candidate {
    rank pair_rank;
    std::uint32_t start, node, version;
  };
  std::vector<candidate> heap;
};

// The number of tokens the piece becomes (0 for an empty piece).
std::size_t count_piece_tokens(const rank_table& ranks, std::string_view piece, merge_scratch& scratch);

// The piece's token boundaries (start offsets, then piece.size()): for tests
// and diagnostics; the request path only counts.
std::vector<std::uint32_t> split_piece(const rank_table& ranks, std::string_view piece);

}  // namespace gistproxy::rewrite::tokens
