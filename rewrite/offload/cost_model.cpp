#include "rewrite/offload/cost_model.hpp"

#include <algorithm>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {

offer_decision decide_offer(const cost_model_config& cfg, std::uint64_t head_tokens, std::uint64_t definition_tokens,
                            double read_ratio, const std::vector<offload_point>& points) {
  offer_decision d;
  const double rho = std::clamp(read_ratio, 0.0, 1.0);
  if (double(definition_tokens) <= cfg.max_overhead * double(head_tokens)) {
    d.reason = offer_decision::why::head;
    return d;
  }
  double earlier_savings = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double prefix = double(points[i].prefix_tokens);
    const double gain = double(points[i].saving_tokens) + rho * earlier_savings;
    const double cost = (1.0 - rho) * prefix + double(definition_tokens) + cfg.page_in_rate * rho * prefix;
    if (gain >= cost) {
      d.reason = offer_decision::why::output_pays;
      d.first_paying = i;
      return d;
    }
    earlier_savings += double(points[i].saving_tokens);
  }
  return d;
}

double default_read_ratio(std::string_view api) {
  if (api == "messages") return 0.1 / 1.25;  // Anthropic: reads 0.1x, writes 1.25x the input price
  if (api == "gemini") return 0.25;
  return 0.1;  // OpenAI's current models
}

std::optional<std::size_t> stable_head_bytes(std::string_view body, std::string_view member) {
  json::cursor c(body);
  if (c.peek() != json::kind::object) return std::nullopt;
  std::size_t list_rest = 0;  // the list's bytes after its first item
  auto whole = c.object([&](std::string_view key, json::cursor& v) {
    if (key != member || v.peek() != json::kind::array) return v.skip_value().has_value();
    std::size_t second_begin = 0;
    auto list = v.array([&](std::size_t index, json::cursor& item) {
      if (index == 1) second_begin = item.pos();
      return item.skip_value().has_value();
    });
    if (list && second_begin) list_rest = list->end - second_begin;
    return list.has_value();
  });
  if (!whole) return std::nullopt;
  return body.size() - std::min(body.size(), list_rest);
}

}  // namespace gistproxy::rewrite
