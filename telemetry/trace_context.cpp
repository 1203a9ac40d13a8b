#include "telemetry/trace_context.hpp"

#include <openssl/sha.h>

#include <cstdio>

namespace gistproxy::telemetry {

std::optional<trace_parent> parse_traceparent(std::string_view h) {
  // version(2) - trace(32) - parent(16) - flags(2) = 55 characters.
  if (h.size() < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-') return std::nullopt;
  auto version = byte_id<1>::from_hex(h.substr(0, 2));
  auto flags = byte_id<1>::from_hex(h.substr(53, 2));
  auto trace = trace_id::from_hex(h.substr(3, 32));
  auto parent = span_id::from_hex(h.substr(36, 16));
  if (!version || !flags || !trace || !parent) return std::nullopt;
  if (version->bytes[0] == 0xff) return std::nullopt;
  if (version->bytes[0] == 0x00 && h.size() != 55) return std::nullopt;
  if (version->bytes[0] != 0x00 && h.size() > 55 && h[55] != '-') return std::nullopt;
  if (!trace->valid() || !parent->valid()) return std::nullopt;
  return trace_parent{*trace, *parent, flags->bytes[0]};
}

std::string format_traceparent(const trace_id& trace, const span_id& parent, std::uint8_t flags) {
  char f[3];
  std::snprintf(f, sizeof f, "%02x", flags);
  return "00-" + trace.hex() + "-" + parent.hex() + "-" + f;
}

trace_id derive_trace_id(std::string_view key) {
  std::array<std::uint8_t, SHA256_DIGEST_LENGTH> digest;
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest.data());
  return trace_id_from_sha256(digest);
}

trace_id trace_id_from_sha256(std::span<const std::uint8_t, 32> digest) {
  trace_id id;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = digest[i];
  if (!id.valid()) id.bytes[15] = 1;  // astronomically unlikely, but all-zero is invalid
  return id;
}

}  // namespace gistproxy::telemetry
