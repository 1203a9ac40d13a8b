#include "rewrite/text/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace gistproxy::rewrite::text {

bool is_valid_utf8(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto* end = p + bytes.size();
  while (p < end) {
    // Eight ASCII bytes at a time: most tool output is ASCII.
    if (end - p >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        p += 8;
        continue;
      }
    }
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;
    else if (c == 0xED) n = 3, hi = 0x9F;  // no surrogates
    else if (c >= 0xE1 && c <= 0xEF) n = 3;
    else if (c == 0xF0) n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;
    else return false;
    if (std::size_t(end - p) < n || p[1] < lo || p[1] > hi) return false;
    for (std::size_t i = 2; i < n; ++i)
      if ((p[i] & 0xC0) != 0x80) return false;
    p += n;
  }
  return true;
}

std::size_t utf8_floor(std::string_view s, std::size_t cut) {
  if (cut >= s.size()) return s.size();
  // Step back over at most three continuation bytes to the sequence's start.
  std::size_t back = 0;
  while (cut > 0 && back < 3 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut, ++back;
  return cut;
}

std::string scrub_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  for (std::size_t i = 0; i < s.size();) {
    // The longest valid sequence starting here (1..4 bytes), else U+FFFD.
    std::size_t n = 0;
    for (std::size_t len = 1; len <= 4 && i + len <= s.size(); ++len)
      if (is_valid_utf8(s.substr(i, len))) {
        n = len;
        break;
      }
    if (n) out.append(s.substr(i, n));
    else out += "\xEF\xBF\xBD";
    i += n ? n : 1;
  }
  return out;
}

std::size_t raw_string_floor(std::string_view raw, std::size_t cut) {
  cut = utf8_floor(raw, cut);
  for (std::size_t i = 0; i < cut; ++i) {
    if (raw[i] != '\\') continue;
    const std::size_t escape = i + 1 < raw.size() && raw[i + 1] == 'u' ? 6 : 2;
    if (i + escape > cut) return i;
    i += escape - 1;
  }
  return cut;
}

}  // namespace gistproxy::rewrite::text
