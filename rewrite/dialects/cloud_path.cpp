#include "rewrite/dialects/cloud_path.hpp"

namespace gistproxy::rewrite::cloud_path {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

}  // namespace

std::string_view segment_after(std::string_view path, std::string_view prefix, bool stop_at_colon) {
  if (!path.starts_with(prefix)) return {};
  auto rest = path.substr(prefix.size());
  return rest.substr(0, rest.find_first_of(stop_at_colon ? "/:" : "/"));
}

std::string model_id(std::string_view encoded) {
  constexpr std::size_t max_model_id = 2048;  // an ARN at its longest
  if (encoded.size() > 3 * max_model_id) return {};
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    char c = encoded[i];
    if (c == '%') {
      if (i + 2 >= encoded.size()) return {};  // a '%' without its two hex digits
      const int hi = hex_digit(encoded[i + 1]), lo = hex_digit(encoded[i + 2]);
      if (hi < 0 || lo < 0) return {};
      c = char(hi * 16 + lo);
      i += 2;
    }
    if (c < 0x21 || c > 0x7e) return {};
    out += c;
  }
  return out.size() > max_model_id ? std::string() : out;
}

std::string percent_encoded(std::string_view s) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (unreserved(c)) {
      out += char(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

}  // namespace gistproxy::rewrite::cloud_path
