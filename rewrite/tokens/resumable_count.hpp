// Counting a text that re-sends the first bytes of one counted before
// (replay's turns: turn N+1's body is turn N's and a few more items) without
// reading those bytes again: the first count leaves marks, places where
// counting may resume with the tokens counted so far, and the next count
// starts at the last mark the shared bytes decide. The result is the count
// of the whole text, exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "rewrite/gist/content_shape.hpp"

namespace gistproxy::rewrite::tokens {

// Where counting may resume: the text's first `at` bytes counted `units`
// (tokens, or code points for the characters/4 heuristic).
struct count_mark {
  std::size_t at = 0;
  std::uint64_t units = 0;
};

// A resumed count: the text's tokens, and the byte reading started at.
struct resumed_count {
  std::uint64_t tokens = 0;
  std::size_t read_from = 0;
};

// estimate(text, kind) of `e`, for a text whose first `same_bytes` bytes are
// those of the text `marks` were left by (empty: none); `marks` becomes this
// text's, about one per `every` bytes. The exact tokenizers and the
// heuristic resume; any other estimator counts the whole text.
resumed_count count_resuming(const token_estimator& e, std::string_view text, content_kind kind,
                             std::vector<count_mark>& marks, std::size_t same_bytes, std::size_t every);

}  // namespace gistproxy::rewrite::tokens
