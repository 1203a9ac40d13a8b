// A request target's parts as sent (origin-form "/path?query"; nothing
// decoded): every layer that routes, names or logs a request reads them here.
#pragma once

#include <string_view>

namespace gistproxy::rewrite {

inline std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

}  // namespace gistproxy::rewrite
