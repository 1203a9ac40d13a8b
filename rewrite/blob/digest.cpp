#include "rewrite/blob/digest.hpp"

#include <openssl/sha.h>

namespace gistproxy::rewrite {

sha256_digest sha256(std::string_view bytes) {
  sha256_digest d;
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), d.data());
  return d;
}

std::string to_hex(const sha256_digest& d) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(64, '0');
  for (std::size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  return out;
}

bool is_handle_prefix(std::string_view s) {
  if (s.size() < 16 || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace gistproxy::rewrite
