#include "rewrite/control_group.hpp"

#include <cctype>

namespace gistproxy::rewrite {

std::string_view group_label(experiment_group g) { return g == experiment_group::control ? "control" : "treated"; }

std::optional<std::uint32_t> parse_control_percent(std::string_view text) {
  std::uint32_t whole = 0, hundredths = 0;
  std::size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (i >= 3) return std::nullopt;
    whole = whole * 10 + std::uint32_t(text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  if (i < text.size()) {
    if (text[i] != '.' || i + 1 == text.size() || text.size() - i - 1 > 2) return std::nullopt;
    std::uint32_t scale = 10;
    for (++i; i < text.size(); ++i, scale /= 10) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
      hundredths += std::uint32_t(text[i] - '0') * scale;
    }
  }
  const std::uint32_t bp = whole * 100 + hundredths;
  if (bp > all_basis_points) return std::nullopt;
  return bp;
}

experiment_group group_of(std::span<const std::uint8_t> trace_id, std::uint32_t control_basis_points) {
  if (control_basis_points == 0 || trace_id.size() < 8) return experiment_group::treated;
  std::uint64_t v = 0;
  for (std::size_t i = trace_id.size() - 8; i < trace_id.size(); ++i) v = (v << 8) | trace_id[i];
  return v % all_basis_points < control_basis_points ? experiment_group::control : experiment_group::treated;
}

}  // namespace gistproxy::rewrite
