// The live view's page: one HTML document with its styles and scripts
// inline, compiled into the binary (it works offline, behind a firewall, and
// fetches nothing but the admin listener's /api/*).
#pragma once

#include <string_view>

namespace gistproxy::proxy {

std::string_view live_page_html();

}  // namespace gistproxy::proxy
