#include "proxy/exchange/exchange_stats.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <vector>

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

// The series every finished request updates for one API and experiment
// group, found once per thread and pair: a request updates about fourteen of
// them, and each labels() lookup hashes and compares its values. A series is
// made on its first update, as labels() would (no zero series appears).
struct request_series {
  telemetry::histogram *request_duration = nullptr, *upstream_duration = nullptr, *proxy_overhead = nullptr;
  telemetry::counter *request_bytes = nullptr, *response_bytes = nullptr;
  telemetry::counter *input_tokens = nullptr, *output_tokens = nullptr;
  std::array<telemetry::counter*, 3> prompt_cache{};  // prompt_cache_kinds
  std::array<telemetry::amount_counter*, 4> cost{};   // cost_kinds
};
constexpr std::array<std::string_view, 3> prompt_cache_kinds{"read", "write", "uncached"};
constexpr std::array<std::string_view, 4> cost_kinds{"input", "cache_read", "cache_write", "output"};

request_series& series_for(telemetry::metric_catalogue& m, std::string_view api, std::string_view group) {
  struct entry {
    std::uint64_t catalogue;  // a family id of the catalogue: never reused, unlike its address
    std::string api, group;
    request_series series;
  };
  thread_local std::vector<entry> memo;
  const auto catalogue = m.requests.id();
  for (auto& e : memo)
    if (e.catalogue == catalogue && e.api == api && e.group == group) return e.series;
  if (memo.size() >= 64) memo.clear();  // bounded (APIs x groups are few); a miss only looks up again
  return memo.emplace_back(entry{catalogue, std::string(api), std::string(group), {}}).series;
}

template <class M>
M& series(M*& memo, telemetry::family<M>& f, std::initializer_list<std::string_view> values) {
  if (!memo) memo = &f.labels(values);
  return *memo;
}

}  // namespace

void exchange_stats::request_finished(const finished_request& r) {
  metrics_.requests.labels({api_, r.status, r.group, r.protocol}).inc();
  auto& s = series_for(metrics_, api_, r.group);
  const std::initializer_list<std::string_view> by{api_, r.group};
  series(s.request_duration, metrics_.request_duration, by).observe(seconds(r.total));
  series(s.upstream_duration, metrics_.upstream_duration, by).observe(seconds(r.upstream_wait));
  series(s.proxy_overhead, metrics_.proxy_overhead, by)
      .observe(seconds(std::max(r.total - r.upstream_wait, std::chrono::nanoseconds(0))));
  series(s.request_bytes, metrics_.request_bytes, by).inc(r.bytes_in);
  series(s.response_bytes, metrics_.response_bytes, by).inc(r.bytes_out);
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
  auto& s = series_for(m, api, group);
  if (usage.input_tokens > 0) series(s.input_tokens, m.input_tokens, {api, group}).inc(std::uint64_t(usage.input_tokens));
  if (usage.output_tokens > 0)
    series(s.output_tokens, m.output_tokens, {api, group}).inc(std::uint64_t(usage.output_tokens));
  // Only when the API reported its cache split: an unknown split is not "uncached".
  if (usage.input_tokens < 0 || usage.cache_read_tokens < 0) return;
  const std::array<std::int64_t, 3> tokens{usage.cache_read_tokens, usage.cache_write_tokens,
                                           usage.uncached_input_tokens()};
  for (std::size_t k = 0; k < tokens.size(); ++k)
    if (tokens[k] > 0)
      series(s.prompt_cache[k], m.prompt_cache_tokens, {api, prompt_cache_kinds[k], group}).inc(std::uint64_t(tokens[k]));
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
  auto& series_of_pair = series_for(m, api, group);
  const std::array<double, 4> usd{cost.input, cost.cache_read, cost.cache_write, cost.output};
  for (std::size_t k = 0; k < usd.size(); ++k)
    if (usd[k] > 0) series(series_of_pair.cost[k], m.cost_usd, {api, cost_kinds[k], group}).add(usd[k]);
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
