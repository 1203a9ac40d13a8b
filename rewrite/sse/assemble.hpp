// A streamed response assembled into the JSON object the API returns with
// stream:false — for recordings, which keep one response per exchange. Chat
// Completions: chunks merged (content, refusal, tool call arguments by index,
// last usage); Anthropic Messages: message_start plus every content block's
// deltas (tool input JSON parsed at its end) plus message_delta; Responses:
// the response carried by the terminal event. nullopt when the text holds no
// event of that API.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rewrite/dialect.hpp"

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

// Each API's assembly (its dialect's assemble_stream calls it).
std::optional<nlohmann::json> assemble_chat_stream(std::string_view sse_text);
std::optional<nlohmann::json> assemble_messages_stream(std::string_view sse_text);
std::optional<nlohmann::json> assemble_responses_stream(std::string_view sse_text);
}  // namespace sse

// Whether a response body is an event stream (by its first bytes).
bool looks_like_sse(std::string_view body);

}  // namespace gistproxy::rewrite
