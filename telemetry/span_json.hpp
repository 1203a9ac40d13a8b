// The two wire forms of a span: a span-log line (flat attributes) and the
// OTLP/HTTP JSON mapping (hex ids, enums as integers, 64-bit ints as strings).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/span.hpp"

namespace gistproxy::telemetry {

// One JSON object (no trailing newline): traceId, spanId, parentSpanId, name,
// kind, startTimeUnixNano, endTimeUnixNano, attributes {flat}, status.
std::string to_span_log_line(const span& s);

struct resource_info {
  std::string service_name = "gistproxy";
  std::string service_version = GISTPROXY_VERSION;
};

// ExportTraceServiceRequest: resourceSpans[].scopeSpans[].spans[].
nlohmann::json to_otlp_request(const std::vector<span>& spans, const resource_info& resource);

}  // namespace gistproxy::telemetry
