// Which tool outputs leave the window. A decision depends only on the output's
// bytes, its tool and the configuration, so it is the same on every turn.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "rewrite/wire_format.hpp"
#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/cost_model.hpp"

namespace gistproxy::rewrite {

struct tool_rule {
  enum class action { never, always, threshold } what = action::threshold;
  std::uint64_t tokens = 0;  // for threshold
};

// always: every request that declares tools; when_referenced: only requests
// holding a reference; cost: where the cost model says it pays (cost_model.hpp).
enum class inject_mode { always, when_referenced, cost };

struct offload_config {
  std::uint64_t threshold_tokens = 2500;
  std::map<std::string, tool_rule, std::less<>> tool_rules;  // --tool-policy NAME=never|always|TOKENS
  // Budget mode: when the request exceeds budget, offload further outputs,
  // oldest first, until it is under floor (hysteresis: few, large steps).
  std::uint64_t budget_tokens = 0;  // 0: off
  std::uint64_t floor_tokens = 0;   // 0: 60% of the budget
  inject_mode inject = inject_mode::always;
  cost_model_config cost_model;  // for inject_mode::cost
  age_config age;                // age-aware offload (cost_model.hpp); with inject always or cost
  std::string tool_name = "read_blob";
  std::string fallback_tool_name = "gistproxy_read_blob";  // when the client has its own read_blob
  std::uint64_t max_blob_bytes = 16ull << 20;
  std::uint64_t min_offload_bytes = 256;  // never offload what a reference would not shrink
  text_results text_tool_results = text_results::none;  // --text-tool-results cline
  reference_config reference;
  // An output read back on more than this many turns of its conversation
  // makes the conversation a re-reader (read_backs.hpp); 0: never.
  std::uint32_t max_read_backs = 1;
};

// Parses "NAME=never", "NAME=always" or "NAME=4000"; nullopt on bad syntax.
std::optional<std::pair<std::string, tool_rule>> parse_tool_rule(const std::string& spec);

}  // namespace gistproxy::rewrite
