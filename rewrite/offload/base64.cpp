#include "rewrite/offload/base64.hpp"

#include <array>

namespace gistproxy::rewrite {
namespace {
constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::array<int, 256> decode_table() {
  std::array<int, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
  return t;
}
constexpr auto table = decode_table();
}  // namespace

bool base64_decode(std::string_view in, std::string& out) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  out.clear();
  out.reserve(in.size() * 3 / 4);
  unsigned buffer = 0;
  int bits = 0;
  for (unsigned char c : in) {
    int v = table[c];
    if (v < 0) return false;
    buffer = (buffer << 6) | unsigned(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((buffer >> bits) & 0xFF);
    }
  }
  return bits < 6;
}

std::string base64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned n = (unsigned(static_cast<unsigned char>(in[i])) << 16) |
                 (unsigned(static_cast<unsigned char>(in[i + 1])) << 8) | static_cast<unsigned char>(in[i + 2]);
    out += alphabet[n >> 18];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += alphabet[n & 63];
  }
  if (i < in.size()) {
    unsigned n = unsigned(static_cast<unsigned char>(in[i])) << 16;
    if (i + 1 < in.size()) n |= unsigned(static_cast<unsigned char>(in[i + 1])) << 8;
    out += alphabet[n >> 18];
    out += alphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? alphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace gistproxy::rewrite
