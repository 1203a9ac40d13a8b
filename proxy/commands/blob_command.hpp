// `gistproxy blob get|verify|gc`: operator access to the blob store.
#pragma once

#include <string>
#include <vector>

namespace gistproxy::proxy {

int blob_command(const std::vector<std::string>& args);

}  // namespace gistproxy::proxy
