// Request bodies sent with a Content-Encoding are decoded before rewriting
// (gzip, deflate, br, zstd); anything else is forwarded untouched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite {

enum class decode_status { ok, unsupported, corrupt, too_large };

// Decodes `body` per `encoding` ("gzip", "x-gzip", "deflate", "br", "zstd";
// "identity" or empty is a no-op) into out, refusing output over max_bytes.
decode_status decode_body(std::string_view encoding, std::string_view body, std::uint64_t max_bytes, std::string& out);

}  // namespace gistproxy::rewrite
