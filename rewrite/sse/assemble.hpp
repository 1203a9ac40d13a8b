// What every API's stream assembly shares: a streamed response is assembled
// into the JSON object the API returns with stream:false (for recordings,
// which keep one response per exchange) by its wire format, in its API's own
// folder (rewrite/dialects/NAME/NAME_stream.cpp), from these parsed events.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rewrite/wire_format.hpp"

namespace gistproxy::rewrite {

namespace sse {
// Every event's data parsed as JSON, with its event name (skips [DONE],
// comments and non-JSON data): what each API's assembly works from.
std::vector<std::pair<std::string, nlohmann::json>> parsed_events(std::string_view text);
// Runs an assembly on parsed events; a shape it did not expect (a member of
// another type) is "not assembled", never an exception escaping into the
// recorder's thread.
std::optional<nlohmann::json> assemble_guarded(
    std::string_view sse_text,
    const std::function<std::optional<nlohmann::json>(const std::vector<std::pair<std::string, nlohmann::json>>&)>& assemble);

// Indices come from the upstream: a block or call index past this is not
// assembled (a hostile index must not make us allocate millions of slots).
inline constexpr std::int64_t max_index = 4096;
// obj[key] += piece, when piece is a string (obj[key] made a string first).
void append_string(nlohmann::json& obj, const char* key, const nlohmann::json& piece);
}  // namespace sse

// Whether a response body is an event stream (by its first bytes).
bool looks_like_sse(std::string_view body);

}  // namespace gistproxy::rewrite
