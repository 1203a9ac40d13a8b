// The rank files of rewrite/tokens/data, linked into the binary (zstd, as
// committed) so a deployment needs no data directory.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite::tokens {

// The decompressed rank data of a built-in encoding, or nullopt (and *error).
std::optional<std::string> embedded_rank_data(std::string_view encoding, std::string* error);

}  // namespace gistproxy::rewrite::tokens
