// Cline's CLI keeps its base URL in its own settings (providers.json, written
// by `cline auth -b`), not in the environment. `gistproxy wrap cline` copies
// that file into the run's overlay folder with the base URL of the provider
// Cline last used pointed at the proxy, and names the copy in
// CLINE_PROVIDER_SETTINGS_PATH: the user's file stays untouched, and the URL
// it held becomes the proxy's upstream (chaining). Only the OpenAI-compatible
// provider (Chat Completions) is wrapped. A providers file that cannot be
// read (a folder, a FIFO, over 1 MiB, not JSON) is said and left alone.
#pragma once

#include <optional>
#include <string>

#include "proxy/commands/wrap_agents.hpp"

namespace gistproxy::proxy {

// The settings for Cline behind the proxy at `base`; `overlay_dir` empty:
// write nothing, say what to run in notes. `lift_limits`: Cline's cut of
// command output is fixed, which a note says.
agent_launch cline_settings(const std::string& base, bool lift_limits, const std::string& overlay_dir);

// The base URL Cline's last-used OpenAI-compatible provider had, without its
// "/v1" (the proxy's upstream); nullopt when there is none.
std::optional<std::string> cline_chained_upstream();

}  // namespace gistproxy::proxy
