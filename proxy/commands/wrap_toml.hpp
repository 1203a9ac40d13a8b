// Enough of TOML to read the keys `gistproxy wrap` needs from Codex's
// config.toml (model_provider, profile, openai_base_url, a provider's
// base_url): every string value of the document by its key path. Tables
// ([a.b], [a."b c"]), dotted and quoted keys, inline tables, the four kinds
// of string and comments are understood; numbers, booleans, dates and
// arrays are skipped over, and so are arrays of tables ([[a]]). The file is
// the user's yet read as input: nesting is bounded, and anything that is not
// TOML as far as this reader goes is nullopt, never a guess.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::proxy {

using toml_path = std::vector<std::string>;  // {"model_providers", "corp", "base_url"}

std::optional<std::map<toml_path, std::string>> toml_strings(std::string_view text);

}  // namespace gistproxy::proxy
