// Builds an nlohmann tree from JSON text with the position-preserving scanner
// instead of nlohmann's lexer, for the small values the request path reads
// on every answer (its `usage` object): the lexer alone cost ~9k instructions
// for a 60-byte object, more than the rest of reading the answer.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gistproxy::rewrite::json {

// The same value nlohmann's parser gives for valid JSON (integers as
// unsigned when not negative, as it does). nullopt for malformed text, for
// nesting deeper than max_depth, and for strings that are not valid UTF-8.
std::optional<nlohmann::json> parse_tree(std::string_view text, std::size_t max_depth = 16);

}  // namespace gistproxy::rewrite::json
