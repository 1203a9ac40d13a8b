// The built-in encodings' pre-tokenisation patterns, matched by hand over
// ASCII text. PCRE2's JIT match costs more than the BPE merges that follow it;
// most text (JSON, code, English) is ASCII, where each of the two patterns'
// alternatives reduces to a few scans over a byte class table.
//
// Exact or nothing: ascii_piece gives the piece PCRE2 would match at that
// position (leftmost match, first alternative that succeeds, greedy
// quantifiers backtracked as PCRE2 does), or 0 when the outcome depends on a
// byte >= 0x80 (a non-ASCII character may be a letter, a mark, a digit, white
// space, a symbol, 'ſ' matching 's' caselessly, or invalid UTF-8), and the
// caller asks PCRE2 for that position instead. Only the two patterns' exact
// bytes select it; any other pattern is PCRE2's alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gistproxy::rewrite::tokens {

enum class ascii_grammar : std::uint8_t { none, o200k, cl100k };

// The pattern strings of o200k_base and cl100k_base as the rank files carry
// them (tiktoken's, before \s is made explicit).
extern const std::string_view o200k_pattern;
extern const std::string_view cl100k_pattern;

// Which hand matcher reproduces this pattern: o200k or cl100k when it is
// byte for byte that encoding's pattern, none for anything else.
ascii_grammar ascii_grammar_of(std::string_view pattern);

// The length of the piece the pattern matches at text[pos] (pos < size), or
// 0 when deciding it would take a non-ASCII byte (or g is none). Looks at the
// piece, at most three bytes past it, and for a white space piece the rest of
// its run (read again by the next piece, which ends it): splitting a text
// this way is linear in its size, however hostile.
std::size_t ascii_piece(ascii_grammar g, std::string_view text, std::size_t pos);

}  // namespace gistproxy::rewrite::tokens
