#include "proxy/net/via_marker.hpp"

#include <boost/beast/core/string.hpp>
#include <cstdint>
#include <random>

namespace gistproxy::proxy {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// The received-by of one Via element ("1.1 name (comment)"): its second word.
std::string_view received_by(std::string_view element) {
  std::size_t at = 0;
  while (at < element.size() && is_space(element[at])) ++at;
  while (at < element.size() && !is_space(element[at])) ++at;  // the received protocol
  while (at < element.size() && is_space(element[at])) ++at;
  const std::size_t start = at;
  while (at < element.size() && !is_space(element[at]) && element[at] != '(') ++at;
  return element.substr(start, at - start);
}

// Calls `visit` with each element of a Via value: split at commas outside
// comments (a comment may hold commas, and backslash-escaped parentheses).
template <class Visit>
void for_each_element(std::string_view value, Visit&& visit) {
  std::size_t start = 0, depth = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (depth > 0 && c == '\\') {
      ++i;  // a quoted pair inside a comment
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      visit(value.substr(start, i - start));
      start = i + 1;
    }
  }
  visit(value.substr(std::min(start, value.size())));
}

}  // namespace

via_marker::via_marker() {
  std::random_device random;
  const std::uint64_t id = std::uint64_t(random()) << 32 | random();
  static constexpr char digits[] = "0123456789abcdef";
  pseudonym_ = "gistproxy-";
  for (int shift = 60; shift >= 0; shift -= 4) pseudonym_ += digits[(id >> shift) & 15];
}

std::string via_marker::entry(unsigned version) const {
  const std::string_view protocol = version >= 20 ? "2" : version == 10 ? "1.0" : "1.1";
  return std::string(protocol) + " " + pseudonym_;
}

bool via_marker::seen_in(const boost::beast::http::fields& fields) const {
  bool seen = false;
  for (auto [it, end] = fields.equal_range(boost::beast::http::field::via); it != end && !seen; ++it)
    for_each_element(std::string_view(it->value()), [&](std::string_view element) {
      seen = seen || boost::beast::iequals(received_by(element), pseudonym_);
    });
  return seen;
}

}  // namespace gistproxy::proxy
