#include "proxy/exchange/exchange_stats.hpp"

namespace gistproxy::proxy {

void exchange_stats::degraded_mode(std::string_view reason, std::uint64_t n) {
  if (n) metrics_.rewrite_failures.labels({api_, reason}).inc(n);
}

void exchange_stats::rewrite_outcome(std::string_view outcome) { metrics_.rewrites.labels({api_, outcome}).inc(); }

void exchange_stats::calls_past_hop_limit(std::uint64_t n) {
  metrics_.page_ins.labels({api_, rewrite::page_mode_name(rewrite::page_mode::full), page_in_result::hop_limit}).inc(n);
}

void exchange_stats::page_in_hops(int hops) { metrics_.page_in_hops.labels({api_}).observe(double(hops)); }

std::string_view exchange_stats::result_label(const rewrite::page_result& r) {
  if (r.ok) return page_in_result::ok;
  if (r.error == rewrite::blob_error::none) return page_in_result::bad_request;
  return rewrite::blob_error_name(r.error);
}

void exchange_stats::page_in(const rewrite::page_result& r, bool churn) {
  metrics_.page_ins.labels({api_, rewrite::page_mode_name(r.mode), result_label(r)}).inc();
  if (!r.integrity_ok) metrics_.integrity_failures.labels({api_}).inc();
  if (r.ok) metrics_.paged_in_tokens.labels({api_}).inc((r.bytes_returned + 3) / 4);
  if (churn) metrics_.paging_churn.labels({api_}).inc();
}

void exchange_stats::offload(const rewrite::offload_record& o) {
  metrics_.offloads.labels({api_, o.kind}).inc();
  metrics_.offload_tokens_before.labels({api_}).inc(o.tokens_before);
  metrics_.offload_tokens_after.labels({api_}).inc(o.tokens_after);
  metrics_.offloaded_bytes.labels({api_}).inc(o.bytes);
  if (o.deduplicated) metrics_.dedupe_hits.labels({api_}).inc();
}

}  // namespace gistproxy::proxy
