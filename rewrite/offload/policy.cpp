#include "rewrite/offload/policy.hpp"

namespace gistproxy::rewrite {

std::optional<std::pair<std::string, tool_rule>> parse_tool_rule(const std::string& spec) {
  auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) return std::nullopt;
  std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
  tool_rule rule;
  if (value == "never") rule.what = tool_rule::action::never;
  else if (value == "always") rule.what = tool_rule::action::always;
  else {
    char* end = nullptr;
    auto n = std::strtoull(value.c_str(), &end, 10);
    if (!end || *end) return std::nullopt;
    rule.tokens = n;
  }
  return std::make_pair(name, rule);
}

}  // namespace gistproxy::rewrite
