#pragma once

#include <cstddef>
#include <string>

namespace gistproxy::proxy {

// s.resize(s.size() + n), without zeroing the n new bytes where the standard
// library allows it (uninitialized_grow.cpp): for bytes about to be overwritten.
void grow_uninitialized(std::string& s, std::size_t n);

}  // namespace gistproxy::proxy
