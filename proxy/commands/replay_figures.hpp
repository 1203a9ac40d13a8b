// The figures `gistproxy replay` prints for a trace and in total: one JSON
// object (--json) and the text lines, from the same replay_stats.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "rewrite/replay/replay_run.hpp"

namespace gistproxy::proxy {

// "12.5% saved", or "3.0% more" when the read_blob tool costs more than offloading saved.
std::string saved_text(double share);
nlohmann::json stats_json(const rewrite::replay_stats& s);
std::string stats_text(const rewrite::replay_stats& s, const std::string& indent);

}  // namespace gistproxy::proxy
