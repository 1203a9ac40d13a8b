#pragma once

#include <string>
#include <string_view>

namespace gistproxy::rewrite {

// Standard base64 (RFC 4648, '=' padding optional); false on bad input.
bool base64_decode(std::string_view in, std::string& out);
std::string base64_encode(std::string_view in);

}  // namespace gistproxy::rewrite
