// Builds an nlohmann tree from JSON text with the position-preserving scanner
// instead of nlohmann's lexer, for the small values the request path reads
// on every answer (its `usage` object): the lexer alone cost ~9k instructions
// for a 60-byte object, more than the rest of reading the answer.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite::json {

// Exactly what nlohmann's parser accepts and the value it gives (integers as
// unsigned when not negative, as it does): nullopt for malformed text, raw
// control characters or lone surrogates in strings, invalid UTF-8, and for
// nesting deeper than max_depth. Differential-fuzzed against nlohmann.
// With lone_surrogates::keep, a lone surrogate (escaped, or as its three raw
// bytes) is accepted and kept as WTF-8 (scanner.hpp); nothing else changes.
std::optional<nlohmann::json> parse_tree(std::string_view text, std::size_t max_depth = 16,
                                         lone_surrogates lone = lone_surrogates::replace);

// checked::parse's contract (a discarded value for anything refused, never a
// throw, nesting bounded at checked::default_max_depth) on parse_tree: what
// the request path uses for every stream event and answer it reads. Lone
// surrogates are kept (WTF-8): upstreams echo them from a client's text and
// models emit them, and an answer refused for one could not be searched for
// read_blob calls. checked::dump writes them back as the escapes they were.
nlohmann::json parse_checked(std::string_view text, std::size_t max_depth = 128);

}  // namespace gistproxy::rewrite::json
