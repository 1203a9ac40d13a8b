// `gistproxy serve`: builds the shared services once (upstreams, telemetry,
// the blob store and offload engine, the recorder) and runs the server until
// SIGTERM/SIGINT drains it.
#pragma once

#include <string>
#include <vector>

namespace gistproxy::proxy {

int serve_command(const std::vector<std::string>& args, const char* const* environ);

}  // namespace gistproxy::proxy
