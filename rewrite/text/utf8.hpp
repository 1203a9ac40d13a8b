// UTF-8 facts the rewrite needs: whether bytes are valid UTF-8 (only those
// can travel inside a JSON string exactly), and where a cut may fall.
#pragma once

#include <cstddef>
#include <string_view>

namespace gistproxy::rewrite::text {

// RFC 3629: shortest forms only, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view bytes);

// The largest cut <= `cut` that does not split a UTF-8 sequence of `s`.
std::size_t utf8_floor(std::string_view s, std::size_t cut);

}  // namespace gistproxy::rewrite::text
