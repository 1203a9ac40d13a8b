#include "rewrite/offload/cost_model.hpp"

#include <algorithm>

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

std::size_t stable_head_bytes(std::size_t body_bytes, std::optional<json::range> conversation,
                              std::size_t second_item_begin) {
  if (!conversation || second_item_begin <= conversation->begin || second_item_begin > conversation->end)
    return body_bytes;
  return body_bytes - std::min(body_bytes, conversation->end - second_item_begin);
}

}  // namespace gistproxy::rewrite
