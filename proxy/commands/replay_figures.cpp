#include "proxy/commands/replay_figures.hpp"

#include <cmath>
#include <cstdio>

#include "telemetry/number_format.hpp"

namespace gistproxy::proxy {

using telemetry::thousands;

std::string saved_text(double share) {
  char b[48];
  std::snprintf(b, sizeof b, share >= 0 ? "%.1f%% saved" : "%.1f%% more", std::abs(share) * 100.0);
  return b;
}

namespace {

std::string percent(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", share * 100.0);
  return b;
}

}  // namespace

nlohmann::json stats_json(const rewrite::replay_stats& s) {
  nlohmann::json tools = nlohmann::json::object();
  for (const auto& [tool, t] : s.by_tool)
    tools[tool] = {{"outputs", t.outputs}, {"offloaded", t.offloaded}, {"tokens_saved", t.tokens_saved}};
  nlohmann::json heads = nlohmann::json::array();
  for (const auto& [key, use] : s.heads) {
    const auto& c = use.choice;
    nlohmann::json h = {{"assumed", std::string(rewrite::why_name(c.reason))}, {"tokens", c.tokens}, {"turns", use.turns}};
    if (c.reason == rewrite::head_choice::why::format_default)
      h.update({{"agent", c.estimate.agent}, {"as_of", c.estimate.as_of}, {"basis", c.estimate.basis}, {"estimate", true}});
    heads.push_back(std::move(h));
  }
  return {{"turns", s.turns},
          {"conversations", s.conversations},
          {"tokens_before", s.tokens_before},
          {"tokens_after", s.tokens_after},
          {"saved_percent", s.saved_share() * 100.0},
          {"offloads", s.offloads},
          {"distinct_blobs", s.distinct_blobs},
          {"dedupe_ratio", s.dedupe_ratio()},
          {"offloaded_bytes", s.offloaded_bytes},
          {"stored_bytes", s.stored_bytes},
          {"unparsable", s.unparsable},
          {"recorded_page_in_hops", s.recorded_page_in_hops},
          {"page_in_input_tokens", s.page_in_input_tokens},
          {"conversations_costing_more", s.conversations_costing_more},
          {"recorded_read_backs", s.recorded_read_backs},
          {"kept_inline_churn", s.kept_inline_churn},
          {"prefix_pairs", s.prefix_pairs},
          {"prefix_stability", s.prefix_stability_after()},
          {"prefix_stability_client", s.prefix_stability_before()},
          {"cache_read_tokens_before", s.cache_read_tokens_before},
          {"cache_read_tokens_after", s.cache_read_tokens_after},
          {"cache_read_share_before", s.cache_read_share_before()},
          {"cache_read_share_after", s.cache_read_share_after()},
          // Input-side USD with the simulated prompt cache; null when no turn had a price (never $0).
          {"cost_usd_before", s.priced_turns ? nlohmann::json(s.cost_usd_before) : nlohmann::json()},
          {"cost_usd_after", s.priced_turns ? nlohmann::json(s.cost_usd_after) : nlohmann::json()},
          {"priced_turns", s.priced_turns},
          {"unpriced_turns", s.unpriced_turns},
          // Priced turns whose model is not listed, and the family entry that priced each: estimates.
          {"fallback_priced_turns", s.fallback_priced_turns},
          {"priced_as", s.priced_as},
          {"by_tool", tools},
          {"rebuilt_requests", s.rebuilt_requests},
          {"heads", heads},
          {"not_offloaded", s.not_offloaded}};
}

namespace {

// Which head (tools, system prompt) the requests carried, and why.
std::string head_text(const rewrite::replay_stats::head_use& use) {
  using why = rewrite::head_choice::why;
  const auto& c = use.choice;
  const auto turns = " (" + thousands(use.turns) + " turns)";
  switch (c.reason) {
    case why::recorded: return "head (tools, system prompt): as recorded" + turns;
    case why::flag:
      if (!c.tokens) return "head: none assumed (--assume-head-tokens 0)" + turns;
      return "head assumed: about " + thousands(c.tokens) + " tokens per rebuilt request (--assume-head-tokens)" + turns;
    case why::format_default:
      return "head assumed: about " + thousands(c.tokens) + " tokens per rebuilt request (format default: " +
             c.estimate.agent + " as of " + c.estimate.as_of +
             "; yours grows with MCP servers and instructions: --assume-head-tokens N to change)" + turns;
    case why::unknown: break;
  }
  return "head: unknown (not recorded, no estimate for this format): requests carry none; --assume-head-tokens N"
         " to assume one" + turns;
}

// Which listed entry priced which unlisted model: "priced as their family
// (claude-opus-4-9 as claude-opus-4-8)", an estimate said as one.
std::string priced_as_text(const std::map<std::string, std::string>& priced_as) {
  std::string out = "priced as their family (";
  const char* sep = "";
  for (const auto& [model, entry] : priced_as) out += sep + model + " as " + entry, sep = ", ";
  return out + ")";
}

}  // namespace

std::string stats_text(const rewrite::replay_stats& s, const std::string& indent) {
  std::string out = indent + "input tokens " + thousands(s.tokens_before) + " -> " + thousands(s.tokens_after) +
                     " (" + saved_text(s.saved_share()) + "), offloads " + thousands(s.offloads) + ", distinct blobs " +
                    thousands(s.distinct_blobs) + " (dedupe " + percent(s.dedupe_ratio()) + "), stored " +
                    thousands(s.stored_bytes) + " B of " + thousands(s.offloaded_bytes) + " B\n";
  out += indent + "prefix stability " + percent(s.prefix_stability_after()) + " (client as sent: " +
         percent(s.prefix_stability_before()) + ") over " + thousands(s.prefix_pairs) + " consecutive turn pairs\n";
  out += indent + "prompt cache (simulated): cache-read share " + percent(s.cache_read_share_before()) + " -> " +
         percent(s.cache_read_share_after()) + "; input cost ";
  if (s.priced_turns) {
    char usd[96];
    std::snprintf(usd, sizeof usd, "$%.4f -> $%.4f", s.cost_usd_before, s.cost_usd_after);
    out += usd;
    if (s.cost_usd_before > 0) out += " (" + saved_text(1.0 - s.cost_usd_after / s.cost_usd_before) + ")";
  } else {
    out += "unknown";
  }
  if (s.fallback_priced_turns) out += ", " + thousands(s.fallback_priced_turns) + " turns " + priced_as_text(s.priced_as);
  if (s.unpriced_turns) out += ", " + thousands(s.unpriced_turns) + " turns of models without a price";
  out += "\n";
  if (s.recorded_page_in_hops)
    out += indent + "read_blob hops in the recording: " + thousands(s.recorded_page_in_hops) + " (" +
           thousands(s.page_in_input_tokens) + " input tokens, counted in what gistproxy sends)\n";
  if (s.recorded_read_backs)
    out += indent + "outputs read back whole in the recording: " + thousands(s.recorded_read_backs) +
           ", kept inline for churn on later turns: " + thousands(s.kept_inline_churn) + "\n";
  if (s.rebuilt_requests)
    out += indent + thousands(s.rebuilt_requests) + " requests rebuilt from messages (no system prompt or tools unless recorded)\n";
  for (const auto& [key, use] : s.heads) out += indent + head_text(use) + "\n";
  if (!s.not_offloaded.empty()) {
    out += indent + "distinct outputs not offloaded:";
    for (const auto& [why, n] : s.not_offloaded) out += " " + why + " " + thousands(n);
    out += "\n";
  }
  for (const auto& [tool, t] : s.by_tool)
    out += indent + "  " + tool + ": outputs " + thousands(t.outputs) + ", offloaded " + thousands(t.offloaded) +
           ", tokens saved " + thousands(t.tokens_saved) + "\n";
  return out;
}

}  // namespace gistproxy::proxy
