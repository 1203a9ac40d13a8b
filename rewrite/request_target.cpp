#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

// Whether `encoded`, each %XX read as its byte, spells `name`. Compared as it
// is decoded: nothing is allocated for a hostile query's names. A '%' that
// starts no escape stands for itself (it then matches no name we look for).
bool decodes_to(std::string_view encoded, std::string_view name, name_case names) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < encoded.size(); ++i, ++n) {
    char c = encoded[i];
    if (c == '%' && i + 2 < encoded.size() && hex_digit(encoded[i + 1]) >= 0 && hex_digit(encoded[i + 2]) >= 0) {
      c = char(hex_digit(encoded[i + 1]) * 16 + hex_digit(encoded[i + 2]));
      i += 2;
    }
    if (n >= name.size()) return false;
    if (names == name_case::any ? lower(c) != lower(name[n]) : c != name[n]) return false;
  }
  return n == name.size();
}

}  // namespace

std::string_view query_value(std::string_view target, std::string_view name, name_case names) {
  auto query = query_of(target);
  query = query.substr(0, query.find('#'));  // a fragment is no part of the query
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos || eq + 1 == pair.size()) continue;  // no value: not this one
    if (decodes_to(pair.substr(0, eq), name, names)) return pair.substr(eq + 1);
  }
  return {};
}

}  // namespace gistproxy::rewrite
