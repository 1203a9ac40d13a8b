// A streamed response assembled into the JSON object the API returns with
// stream:false — for recordings, which keep one response per exchange. Chat
// Completions: chunks merged (content, refusal, tool call arguments by index,
// last usage); Anthropic Messages: message_start plus every content block's
// deltas (tool input JSON parsed at its end) plus message_delta; Responses:
// the response carried by the terminal event. nullopt when the text holds no
// event of that API.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rewrite/dialect.hpp"

namespace gistproxy::rewrite {

namespace sse {
// Each API's assembly (its dialect's assemble_stream calls it).
std::optional<nlohmann::json> assemble_chat_stream(std::string_view sse_text);
std::optional<nlohmann::json> assemble_messages_stream(std::string_view sse_text);
std::optional<nlohmann::json> assemble_responses_stream(std::string_view sse_text);
}  // namespace sse

// Whether a response body is an event stream (by its first bytes).
bool looks_like_sse(std::string_view body);

}  // namespace gistproxy::rewrite
