// UTF-8 facts the rewrite needs: whether bytes are valid UTF-8 (only those
// can travel inside a JSON string exactly), and where a cut may fall.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gistproxy::rewrite::text {

// RFC 3629: shortest forms only, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view bytes);

// The largest cut <= `cut` that does not split a UTF-8 sequence of `s`.
std::size_t utf8_floor(std::string_view s, std::size_t cut);

// `s` with every byte that does not begin a valid sequence (RFC 3629) written
// as U+FFFD: text we put in a body or an answer is valid UTF-8 whatever it
// was made from.
std::string scrub_utf8(std::string_view s);

// The same for the raw text of a JSON string (as written, escapes and all):
// never inside a UTF-8 sequence nor inside an escape (`\u00e9`, `\"`).
std::size_t raw_string_floor(std::string_view raw, std::size_t cut);

}  // namespace gistproxy::rewrite::text
