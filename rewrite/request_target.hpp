// A request target's parts as sent (origin-form "/path?query"; nothing
// decoded): every layer that routes, names or logs a request reads them here.
#pragma once

#include <string_view>

namespace gistproxy::rewrite {

inline std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

// What follows the '?' (empty without one: no query and an empty one read alike).
inline std::string_view query_of(std::string_view target) {
  const auto q = target.find('?');
  return q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
}

}  // namespace gistproxy::rewrite
