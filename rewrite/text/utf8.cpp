#include "rewrite/text/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace gistproxy::rewrite::text {
namespace {

// The length of the valid UTF-8 sequence starting at p (p < end), 0 if none.
// With `surrogates`, ED A0..BF xx (a UTF-16 surrogate's code unit) counts too.
std::size_t sequence_length(const unsigned char* p, const unsigned char* end, bool surrogates = false) {
  const unsigned char c = *p;
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c == 0xED) n = 3, hi = surrogates ? 0xBF : 0x9F;  // UTF-8 has no surrogates
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (std::size_t(end - p) < n || p[1] < lo || p[1] > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if ((p[i] & 0xC0) != 0x80) return 0;
  return n;
}

template <bool surrogates>
bool is_valid(std::string_view bytes) {
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
    const std::size_t n = sequence_length(p, end, surrogates);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

}  // namespace

bool is_valid_utf8(std::string_view bytes) { return is_valid<false>(bytes); }

bool is_utf8_with_surrogates(std::string_view bytes) { return is_valid<true>(bytes); }

std::size_t utf8_sequence_length(std::string_view s, std::size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  return sequence_length(p + at, p + s.size());
}

std::size_t utf8_floor(std::string_view s, std::size_t cut) {
  if (cut >= s.size()) return s.size();
  // Step back over at most three continuation bytes to the sequence's start.
  std::size_t back = 0;
  while (cut > 0 && back < 3 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut, ++back;
  return cut;
}

bounded_text bounded_utf8(std::string_view s, std::size_t max_bytes) {
  static constexpr std::string_view replacement = "\xEF\xBF\xBD", ellipsis = "\xE2\x80\xA6";
  bounded_text out;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  // Clean up to one character past the bound: each input byte yields at
  // least one output byte, so this reads at most max_bytes + 1 characters.
  while (p < end && out.text.size() <= max_bytes) {
    const std::size_t n = sequence_length(p, end);
    if (n == 0) {
      out.text += replacement;
      out.repaired = true;
      ++p;
    } else {
      out.text.append(reinterpret_cast<const char*>(p), n);
      p += n;
    }
  }
  if (p == end && out.text.size() <= max_bytes) return out;
  // Too long: keep what fits with the ellipsis, cut where a character starts.
  out.cut = true;
  if (max_bytes < ellipsis.size()) {
    out.text.resize(utf8_floor(out.text, max_bytes));
    return out;
  }
  out.text.resize(utf8_floor(out.text, max_bytes - ellipsis.size()));
  out.text += ellipsis;
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

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

}  // namespace gistproxy::rewrite::text
