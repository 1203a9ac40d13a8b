// Trace identity: the W3C traceparent header, and the deterministic trace id
// derived from a conversation's opening so every turn shares one trace.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "telemetry/ids.hpp"

namespace gistproxy::telemetry {

struct trace_parent {
  trace_id trace;
  span_id parent;
  std::uint8_t flags = 1;  // bit 0: sampled
};

// Parses "00-<32 hex>-<16 hex>-<2 hex>". Rejects version ff, all-zero ids,
// uppercase hex and a version-00 header with trailing data.
std::optional<trace_parent> parse_traceparent(std::string_view header);
std::string format_traceparent(const trace_id& trace, const span_id& parent, std::uint8_t flags = 1);

// The first 16 bytes of SHA-256 over the conversation key (API name, system
// prompt, first user message as the client sent them): same opening, same trace.
trace_id derive_trace_id(std::string_view conversation_key);
// The same from a SHA-256 already computed (the request path hashes with a
// reused OpenSSL context: rewrite::sha256).
trace_id trace_id_from_sha256(std::span<const std::uint8_t, 32> digest);

}  // namespace gistproxy::telemetry
