#include "rewrite/cost/ledger.hpp"

#include <algorithm>

namespace gistproxy::rewrite {
namespace {

constexpr double per_token = 1e-6;

std::int64_t at_least_zero(std::int64_t v) { return std::max<std::int64_t>(v, 0); }

bool reported(const token_usage& u) { return u.input_tokens >= 0 && u.output_tokens >= 0; }

// What the client's request as sent would have billed on its input side: the
// first hop's, with the offloaded outputs back and read_blob's definition out.
// Outputs the previous turn carried sit in the cached prefix (read); new ones
// would have been written. The definition, once cached, was read.
double input_without_usd(const token_usage& first, const request_changes& c, const model_price& p) {
  const auto first_input = cost_of(token_usage{first.input_tokens, 0, first.cache_read_tokens, first.cache_write_tokens}, p);
  double usd = first_input.input + first_input.cache_read + first_input.cache_write;
  usd += double(c.offloaded_repeated) * p.cache_read * per_token;
  usd += double(c.offloaded_new) * p.cache_write * per_token;
  usd -= double(c.tool_definition) * (c.tool_definition_new ? p.cache_write : p.cache_read) * per_token;
  return std::max(usd, 0.0);
}

}  // namespace

token_usage usage_between(const token_usage& before, const token_usage& after) {
  if (after.input_tokens <= std::max<std::int64_t>(before.input_tokens, 0)) return {};
  auto grown = [](std::int64_t b, std::int64_t a) { return a < 0 ? a : a - std::max<std::int64_t>(b, 0); };
  return {grown(before.input_tokens, after.input_tokens), grown(before.output_tokens, after.output_tokens),
          grown(before.cache_read_tokens, after.cache_read_tokens),
          grown(before.cache_write_tokens, after.cache_write_tokens)};
}

ledger_entry account(std::span<const token_usage> hops, const request_changes& changes, const model_price* price) {
  ledger_entry e;
  if (hops.empty() || !std::all_of(hops.begin(), hops.end(), reported)) return e;
  e.measured = true;
  for (const auto& h : hops) {
    e.input_with += h.input_tokens;
    e.output_with += h.output_tokens;
  }
  e.input_without = at_least_zero(hops.front().input_tokens + std::int64_t(changes.offloaded_new) +
                                  std::int64_t(changes.offloaded_repeated) - std::int64_t(changes.tool_definition));
  e.output_without = hops.back().output_tokens;  // the answer the client got
  if (!price) return e;
  e.priced = true;
  for (const auto& h : hops) e.usd_with += cost_of(h, *price).total();
  e.usd_without = input_without_usd(hops.front(), changes, *price) + double(e.output_without) * price->output * per_token;
  return e;
}

void ledger_total::add(const ledger_entry& e) {
  ++requests;
  if (!e.measured) {
    ++unmeasured;
    return;
  }
  input_without += e.input_without;
  input_with += e.input_with;
  output_without += e.output_without;
  output_with += e.output_with;
  if (!e.priced) {
    ++unpriced;
    return;
  }
  usd_without += e.usd_without;
  usd_with += e.usd_with;
}

void ledger_total::add(const ledger_total& t) {
  requests += t.requests;
  unmeasured += t.unmeasured;
  unpriced += t.unpriced;
  input_without += t.input_without;
  input_with += t.input_with;
  output_without += t.output_without;
  output_with += t.output_with;
  usd_without += t.usd_without;
  usd_with += t.usd_with;
}

}  // namespace gistproxy::rewrite
