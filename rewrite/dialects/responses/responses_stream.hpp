// OpenAI Responses streams: the filter that splices page-in hops into one client
// stream, and the assembly of a stream into the answer the API returns
// unstreamed (recordings). Only this API's wire format uses them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rewrite/stream_filter.hpp"

namespace gistproxy::rewrite {

std::unique_ptr<stream_filter> make_responses_stream_filter(const wire_format& responses, std::string tool_name);
std::optional<nlohmann::json> assemble_responses_stream(std::string_view sse_text);

}  // namespace gistproxy::rewrite
