#include "proxy/exchange/exchange_stats.hpp"

#include <algorithm>

namespace gistproxy::proxy {

void exchange_stats::degraded_mode(std::string_view reason, std::uint64_t n) {
  if (n) metrics_.rewrite_failures.labels({api_, reason}).inc(n);
}

void exchange_stats::prefix_verdict(rewrite::prefix_verdict verdict, rewrite::experiment_group group, telemetry::span& s) {
  const auto cause = rewrite::break_cause(verdict);
  if (cause.empty()) return;
  metrics_.prefix_breaks.labels({api_, cause, rewrite::group_label(group)}).inc();
  s.set_text("gistproxy.prefix_break", cause);
}

void exchange_stats::rewrite_outcome(std::string_view outcome) { metrics_.rewrites.labels({api_, outcome}).inc(); }

void exchange_stats::calls_past_hop_limit(std::uint64_t n) {
  metrics_.page_ins.labels({api_, rewrite::page_mode_name(rewrite::page_mode::full), page_in_result::hop_limit, source_}).inc(n);
}

namespace {
double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

void exchange_stats::request_finished(const finished_request& r) {
  metrics_.requests.labels({api_, r.status, r.group, r.protocol}).inc();
  metrics_.request_duration.labels({api_, r.group}).observe(seconds(r.total));
  metrics_.upstream_duration.labels({api_, r.group}).observe(seconds(r.upstream_wait));
  metrics_.proxy_overhead.labels({api_, r.group}).observe(seconds(std::max(r.total - r.upstream_wait, std::chrono::nanoseconds(0))));
  metrics_.request_bytes.labels({api_, r.group}).inc(r.bytes_in);
  metrics_.response_bytes.labels({api_, r.group}).inc(r.bytes_out);
  if (!r.error_source.empty()) metrics_.errors.labels({r.error_source, r.error_type, r.group}).inc();
}

void exchange_stats::kept_inline(std::string_view cause, std::uint64_t n) {
  metrics_.outputs_kept_inline.labels({api_, cause}).inc(n);
}

void exchange_stats::read_blob_offer(std::string_view reason) { metrics_.read_blob_offers.labels({api_, reason}).inc(); }

void exchange_stats::outputs_not_worth_offloading(std::uint64_t n) {
  metrics_.outputs_not_worth_offloading.labels({api_}).inc(n);
}

void exchange_stats::turn_memory_bytes(std::uint64_t shared, std::uint64_t fresh) {
  metrics_.turn_memory_bytes.labels({api_, turn_memory_kind::shared}).inc(shared);
  metrics_.turn_memory_bytes.labels({api_, turn_memory_kind::fresh}).inc(fresh);
}

void exchange_stats::upstream_connection_retried() {
  metrics_.upstream_connections.labels({upstream_connection_result::retried}).inc();
}

void exchange_stats::upstream_answer_decoded(std::string_view coding) {
  metrics_.upstream_answers_decoded.labels({coding}).inc();
}

void exchange_stats::page_in_hops(int hops) { metrics_.page_in_hops.labels({api_}).observe(double(hops)); }

std::string_view exchange_stats::result_label(const rewrite::page_result& r) {
  if (r.ok) return page_in_result::ok;
  if (r.error == rewrite::blob_error::none) return page_in_result::bad_request;
  return rewrite::blob_error_name(r.error);
}

void exchange_stats::page_in(const rewrite::page_result& r, bool churn, std::uint64_t tokens) {
  metrics_.page_ins.labels({api_, rewrite::page_mode_name(r.mode), result_label(r), source_}).inc();
  if (!r.integrity_ok) metrics_.integrity_failures.labels({api_}).inc();
  if (r.ok) metrics_.paged_in_tokens.labels({api_}).inc(tokens);
  if (churn) metrics_.paging_churn.labels({api_}).inc();
}

void exchange_stats::blobs_found_damaged(std::uint64_t n) {
  if (n) metrics_.integrity_failures.labels({api_}).inc(n);
}

void exchange_stats::offloads(const std::vector<rewrite::offload_record>& records) {
  // Summed first: late in a long conversation a turn carries a couple of
  // hundred offloads, and each labelled series is a lookup.
  if (records.empty()) return;
  std::uint64_t before = 0, after = 0, bytes = 0, dedupes = 0;
  std::vector<std::pair<std::string_view, std::uint64_t>> by_kind;
  for (const auto& o : records) {
    before += o.tokens_before;
    after += o.tokens_after;
    bytes += o.bytes;
    dedupes += o.deduplicated ? 1 : 0;
    auto it = std::find_if(by_kind.begin(), by_kind.end(), [&](const auto& k) { return k.first == o.kind; });
    if (it == by_kind.end()) by_kind.emplace_back(o.kind, 1);
    else ++it->second;
  }
  for (const auto& [kind, n] : by_kind) metrics_.offloads.labels({api_, kind, source_}).inc(n);
  metrics_.offload_tokens_before.labels({api_}).inc(before);
  metrics_.offload_tokens_after.labels({api_}).inc(after);
  metrics_.offloaded_bytes.labels({api_}).inc(bytes);
  if (dedupes) metrics_.dedupe_hits.labels({api_}).inc(dedupes);
}

void exchange_stats::count_usage(telemetry::metric_catalogue& m, std::string_view api, std::string_view group,
                                 const rewrite::token_usage& usage) {
  if (usage.input_tokens > 0) m.input_tokens.labels({api, group}).inc(std::uint64_t(usage.input_tokens));
  if (usage.output_tokens > 0) m.output_tokens.labels({api, group}).inc(std::uint64_t(usage.output_tokens));
  // Only when the API reported its cache split: an unknown split is not "uncached".
  if (usage.input_tokens < 0 || usage.cache_read_tokens < 0) return;
  auto add = [&](std::string_view kind, std::int64_t n) {
    if (n > 0) m.prompt_cache_tokens.labels({api, kind, group}).inc(std::uint64_t(n));
  };
  add("read", usage.cache_read_tokens);
  add("write", usage.cache_write_tokens);
  add("uncached", usage.uncached_input_tokens());
}

void exchange_stats::set_usage_attributes(telemetry::span& s, const rewrite::token_usage& usage) {
  if (usage.input_tokens >= 0) s.set("gen_ai.usage.input_tokens", usage.input_tokens);
  if (usage.output_tokens >= 0) s.set("gen_ai.usage.output_tokens", usage.output_tokens);
  if (usage.cache_read_tokens >= 0) s.set("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens);
  if (usage.cache_write_tokens >= 0) s.set("gen_ai.usage.cache_write.input_tokens", usage.cache_write_tokens);
}

bool exchange_stats::count_cost(telemetry::metric_catalogue& m, telemetry::span& s, std::string_view api,
                                std::string_view group, const rewrite::price_match* match,
                                const rewrite::token_usage& usage, const offload_tally& offload) {
  if (!usage.known()) return true;  // nothing billed that we could see
  if (!match) {
    m.unpriced_requests.labels({api, group}).inc();
    s.set("gistproxy.priced", false);
    return false;
  }
  if (match->fallback) {  // an estimate: the family entry used, said on the span and counted
    s.set_text("gistproxy.priced_as", match->priced_as);
    m.estimated_price_requests.labels({api, group}).inc();
  }
  const auto* price = &match->price;
  const auto cost = rewrite::cost_of(usage, *price);
  auto add = [&](std::string_view kind, double usd) {
    if (usd > 0) m.cost_usd.labels({api, kind, group}).add(usd);
  };
  add("input", cost.input);
  add("cache_read", cost.cache_read);
  add("cache_write", cost.cache_write);
  add("output", cost.output);
  s.set("gistproxy.cost_usd", cost.total());
  if (offload.tokens_saved || offload.tool_tokens || offload.paged_in_tokens) {
    const double saved = rewrite::input_cost(offload.tokens_saved, *price);
    const double definition = rewrite::input_cost(offload.tool_tokens, *price);
    const double paged_in = rewrite::input_cost(offload.paged_in_tokens, *price);
    m.saved_usd.labels({api}).add(saved);
    m.offload_overhead_usd.labels({api, "read_blob_definition"}).add(definition);
    m.offload_overhead_usd.labels({api, "paged_in"}).add(paged_in);
  }
  return true;
}

rewrite::ledger_entry exchange_stats::count_ledger(telemetry::metric_catalogue& m, telemetry::span& s,
                                                   std::string_view api, const rewrite::price_match* match,
                                                   std::span<const rewrite::token_usage> hop_usage,
                                                   const rewrite::request_changes& changes) {
  const auto e = rewrite::account(hop_usage, changes, match ? &match->price : nullptr);
  if (!e.measured) {
    m.unmeasured_requests.labels({api}).inc();
    s.set("gistproxy.measured", false);
    return e;
  }
  m.ledger_input_tokens.labels({api, "without"}).inc(std::uint64_t(e.input_without));
  m.ledger_input_tokens.labels({api, "with"}).inc(std::uint64_t(e.input_with));
  s.set("gistproxy.input_tokens_without", e.input_without);
  s.set("gistproxy.input_tokens_with", e.input_with);
  if (!e.priced) return e;
  m.ledger_usd.labels({api, "without"}).add(e.usd_without);
  m.ledger_usd.labels({api, "with"}).add(e.usd_with);
  s.set("gistproxy.saved_usd", e.usd_saved());  // negative when offloading cost more
  return e;
}

}  // namespace gistproxy::proxy
