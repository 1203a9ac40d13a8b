// `gistproxy wrap [OPTIONS] AGENT [AGENT ARGS…]` (or `-- COMMAND …` with
// --base-url-env NAME): runs a coding agent behind a private gistproxy
// (wrap_proxy.hpp) with its base URL pointed at it and its own output cut
// lifted (wrap_agents.hpp), then prints what the proxy saved, and returns the
// agent's exit status. `--print-env AGENT` prints the settings instead.
#pragma once

#include <string>
#include <vector>

namespace gistproxy::proxy {

int wrap_command(const std::vector<std::string>& args, const char* const* environ);

}  // namespace gistproxy::proxy
