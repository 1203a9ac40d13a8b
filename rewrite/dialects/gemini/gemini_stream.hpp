// Gemini streams (streamGenerateContent?alt=sse): every event is a partial
// GenerateContentResponse. The filter passes text parts as they come, keeps
// read_blob functionCall parts from the client, holds the client's own calls
// until the turn is known to be final, and withholds the end of the turn (the
// event with finishReason) until the final hop, then sends it once with the
// held calls and usageMetadata summed over hops.
//
// No keep-alive is sent between hops: the @google/genai SDK's stream reader
// only understands `data:` events, and an empty response event would reach
// applications as a chunk. Gemini's own streams pause as long between chunks.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "rewrite/stream_filter.hpp"

namespace gistproxy::rewrite {

std::unique_ptr<stream_filter> make_gemini_stream_filter(const wire_format& gemini, std::string tool_name);

// A Gemini stream assembled into one GenerateContentResponse: the first
// candidate's parts in order (adjacent text parts joined), the last
// finishReason and usageMetadata.
std::optional<nlohmann::json> assemble_gemini_stream(std::string_view sse_text);

}  // namespace gistproxy::rewrite
