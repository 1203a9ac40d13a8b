#include "rewrite/json/wtf8_dump.hpp"

#include "rewrite/json/scanner.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite::json {
namespace {

// The surrogate code unit whose three WTF-8 bytes start at `at`, or 0.
unsigned surrogate_at(std::string_view s, std::size_t at) {
  if (at + 3 > s.size()) return 0;
  const auto b0 = static_cast<unsigned char>(s[at]), b1 = static_cast<unsigned char>(s[at + 1]),
             b2 = static_cast<unsigned char>(s[at + 2]);
  if (b0 != 0xED || b1 < 0xA0 || b1 > 0xBF || (b2 & 0xC0) != 0x80) return 0;
  return 0xD000u | (unsigned(b1 & 0x3F) << 6) | unsigned(b2 & 0x3F);
}

}  // namespace

void escape_wtf8_into(std::string& out, std::string_view bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  std::size_t run = 0;  // where the UTF-8 not yet written starts
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (const std::size_t n = text::utf8_sequence_length(bytes, i)) {
      i += n;
      continue;
    }
    escape_into(out, bytes.substr(run, i - run));
    if (const unsigned unit = surrogate_at(bytes, i)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += hex[(unit >> shift) & 15];
      i += 3;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
    run = i;
  }
  escape_into(out, bytes.substr(run));
}

}  // namespace gistproxy::rewrite::json
