// UTF-8 facts the rewrite needs: whether bytes are valid UTF-8 (only those
// can travel inside a JSON string exactly), and where a cut may fall.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gistproxy::rewrite::text {

// RFC 3629: shortest forms only, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view bytes);

// UTF-8 that may also hold UTF-16 surrogate code units, each as its three
// bytes (ED A0..BF xx): how a parsed answer keeps a lone surrogate escape
// (WTF-8) until checked::dump writes it back as `\udXXX`.
bool is_utf8_with_surrogates(std::string_view bytes);

// Appends code point `cp` (at most U+10FFFF) in UTF-8. A surrogate code unit
// gets its three bytes: WTF-8, which callers that must refuse one check first.
void append_utf8(std::string& out, unsigned cp);

// The length of the valid UTF-8 sequence at s[at] (at < s.size()), 0 when
// none starts there.
std::size_t utf8_sequence_length(std::string_view s, std::size_t at);

// The largest cut <= `cut` that does not split a UTF-8 sequence of `s`.
std::size_t utf8_floor(std::string_view s, std::size_t cut);

// Outside text as a view may keep it: at most `max_bytes` bytes of valid
// UTF-8. Each byte that is not part of a valid sequence becomes U+FFFD
// (`repaired`); text that does not fit is cut on a character boundary and
// ends in "…" (`cut`), so a reader sees that something was changed. Reads at
// most about `max_bytes` bytes of `s`, however long it is. Idempotent: clean
// text within the bound comes back unchanged.
struct bounded_text {
  std::string text;
  bool cut = false, repaired = false;
};
bounded_text bounded_utf8(std::string_view s, std::size_t max_bytes);

// A cut of the raw text of a JSON string (as written, escapes and all): the
// largest <= `cut` inside neither a UTF-8 sequence nor an escape (`\u00e9`).
std::size_t raw_string_floor(std::string_view raw, std::size_t cut);

}  // namespace gistproxy::rewrite::text
