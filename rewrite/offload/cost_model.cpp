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

std::uint64_t age_watermark(const age_config& age, const cost_model_config& cost, double read_ratio,
                            std::uint64_t body_tokens, const std::vector<aged_output>& outputs,
                            std::uint64_t arrival_definition) {
  if (!age.trigger_tokens || !age.step_tokens || body_tokens < age.trigger_tokens) return 0;
  const double rho = std::clamp(read_ratio, 0.0, 1.0);
  const std::uint64_t batches = 1 + (body_tokens - age.trigger_tokens) / age.step_tokens;
  // Offloaded savings before each output, to price a rewrite in forwarded tokens.
  std::vector<double> offloaded_before(outputs.size() + 1, 0.0);
  for (std::size_t i = 0; i < outputs.size(); ++i)
    offloaded_before[i + 1] = offloaded_before[i] + double(outputs[i].offloaded_saving);
  std::uint64_t watermark = 0;
  std::size_t taken = 0;   // outputs ending before this batch's line
  std::size_t before = 0;  // outputs ending before this batch's reach
  // The batch being gathered: outputs past the watermark with a saving.
  std::optional<std::uint64_t> batch_begin;
  std::size_t batch_count = 0;
  double batch_saving = 0;
  for (std::uint64_t k = 0; k < batches; ++k) {
    const std::uint64_t reach = age.trigger_tokens + k * age.step_tokens;
    const std::uint64_t line = reach > age.keep_tokens ? reach - age.keep_tokens : 0;
    for (; taken < outputs.size() && outputs[taken].end_tokens <= line; ++taken) {
      if (!outputs[taken].saving_tokens) continue;
      if (!batch_begin) batch_begin = outputs[taken].begin_tokens;
      ++batch_count;
      batch_saving += double(outputs[taken].saving_tokens);
    }
    while (before < outputs.size() && outputs[before].end_tokens <= reach) ++before;
    if (!batch_count) continue;
    const bool arrives = arrival_definition && watermark == 0;
    const std::uint64_t break_at = arrives ? 0 : std::min(reach, *batch_begin);
    const auto first_after = std::size_t(
        std::lower_bound(outputs.begin(), outputs.end(), break_at,
                         [](const aged_output& o, std::uint64_t at) { return o.begin_tokens < at; }) -
        outputs.begin());
    const double offloaded = first_after < before ? offloaded_before[before] - offloaded_before[first_after] : 0.0;
    const double rewritten =
        std::max(0.0, double(reach + age.step_tokens - break_at) - offloaded - batch_saving);
    const double page_ins = cost.page_in_rate * double(batch_count) * rho * double(reach);
    const double horizon = double(std::min<std::uint64_t>(before, age.max_horizon_turns));
    const double definition = arrives ? double(arrival_definition) * (1.0 + rho * horizon) : 0.0;
    const bool pays = batch_saving * rho * horizon >= (1.0 - rho) * rewritten + page_ins + definition;
    if (pays || age.decide == age_config::gate::tokens) {
      watermark = line;
      batch_begin.reset();
      batch_count = 0;
      batch_saving = 0;
    }
  }
  return watermark;
}

std::size_t stable_head_bytes(std::size_t body_bytes, std::optional<json::range> conversation,
                              std::size_t second_item_begin) {
  if (!conversation || second_item_begin <= conversation->begin || second_item_begin > conversation->end)
    return body_bytes;
  return body_bytes - std::min(body_bytes, conversation->end - second_item_begin);
}

std::size_t cache_order_offset(std::size_t body_bytes, std::optional<json::range> conversation, std::size_t at) {
  if (!conversation || at < conversation->begin || at > conversation->end || conversation->end > body_bytes) return at;
  const auto outside = body_bytes - (conversation->end - conversation->begin);
  return outside + (at - conversation->begin);
}

}  // namespace gistproxy::rewrite
