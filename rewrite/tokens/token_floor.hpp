// A floor on the tokens o200k_base and cl100k_base give a text, counted
// without their tables: for callers that only need to know a count is above
// some bound (the cost model), so that knowing it builds nothing.
#pragma once

#include <cstdint>
#include <string_view>

namespace gistproxy::rewrite::tokens {

// The number of ASCII spaces followed by a printable ASCII character other
// than a space. Both encodings' pre-tokenizing patterns let a space be
// followed by a non-space inside one piece only as that piece's first byte,
// so each such space starts a piece, or the next byte does; two of them are
// at least two bytes apart, so those starts differ; and each piece is at
// least one token. (Holds while the pattern splits the whole text: a text
// whose split fails part-way is counted by characters/4 from there.)
std::uint64_t bpe_token_floor(std::string_view text);

}  // namespace gistproxy::rewrite::tokens
