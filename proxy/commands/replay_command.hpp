// `gistproxy replay [--json] [--sweep-threshold A,B,…] [serve's offload flags] FILE|DIR...`:
// what gistproxy would have saved on recorded traces, offline.
#pragma once

#include <string>
#include <vector>

namespace gistproxy::proxy {

int replay_command(const std::vector<std::string>& args);

}  // namespace gistproxy::proxy
