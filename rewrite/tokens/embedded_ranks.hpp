// The rank files of rewrite/tokens/data, linked into the binary's read-only
// data so a deployment needs no data directory and the tables read them in
// place (no heap copy).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite::tokens {

// The rank data of a built-in encoding, or nullopt (and *error).
std::optional<std::string_view> embedded_rank_data(std::string_view encoding, std::string* error);

}  // namespace gistproxy::rewrite::tokens
