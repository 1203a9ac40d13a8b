// A request target's parts as sent (origin-form "/path?query"; nothing
// decoded): every layer that routes, names or logs a request reads them here.
#pragma once

#include <cstdint>
#include <string_view>

namespace gistproxy::rewrite {

inline std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

// What follows the '?' (empty without one: no query and an empty one read alike).
inline std::string_view query_of(std::string_view target) {
  const auto q = target.find('?');
  return q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
}

enum class name_case : std::uint8_t { exact, any };

// The value of the query parameter `name`, as sent (not decoded), read as the
// API that owns the parameter reads it: names are compared %XX-decoded
// ("%6Bey" is "key"), and the first non-empty value counts ("?key=&key=K" is
// K). Empty when no parameter of that name has a value. Every reader of a
// credential, a control or a token in the query string reads it here, so no
// two of them can disagree about which value a request carries.
std::string_view query_value(std::string_view target, std::string_view name, name_case names = name_case::exact);

}  // namespace gistproxy::rewrite
