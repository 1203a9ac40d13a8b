// SHA-256 and hex helpers: a blob's handle is the hex SHA-256 of its bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gistproxy::rewrite {

using sha256_digest = std::array<std::uint8_t, 32>;

sha256_digest sha256(std::string_view bytes);
std::string to_hex(const sha256_digest& d);
inline std::string sha256_hex(std::string_view bytes) { return to_hex(sha256(bytes)); }
// True for 16..64 lowercase hex characters (a handle or handle prefix).
bool is_handle_prefix(std::string_view s);

// Hashes a key that ends in a hex SHA-256 (a handle, or "tenant/handle") by
// its last 16 characters: they are spread evenly already, so running
// std::hash over all 64-80 bytes, a few hundred times a turn, buys nothing.
// Shorter keys fall back to std::hash. Equal keys hash equal; the map still
// compares keys in full.
struct handle_key_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const noexcept;
};

}  // namespace gistproxy::rewrite
