// Bedrock ConverseStream: the filter that splices page-in hops into one client
// stream, and the assembly of a stream into the answer Converse returns
// unstreamed (recordings). Only this API's wire format uses them.
//
// ConverseStream answers in binary AWS event-stream messages; the proxy's
// bridge hands each one to the filter as an SSE event whose name is the
// message's :event-type (messageStart, contentBlockStart, contentBlockDelta,
// contentBlockStop, messageStop, metadata, or an exception's type) and whose
// data is its JSON payload, and frames each event the filter emits back into
// an event-stream message of that type. Assembly reads the same SSE text.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rewrite/stream_filter.hpp"

namespace gistproxy::rewrite {

std::unique_ptr<stream_filter> make_converse_stream_filter(const wire_format& converse, std::string tool_name);
std::optional<nlohmann::json> assemble_converse_stream(std::string_view sse_text);

}  // namespace gistproxy::rewrite
