// The exchange's metrics, spans and access-log line in one place, with every
// label value a named constant (dashboards and alerts query these values).
// Phases report what happened here; none of them touches a metric family.
#pragma once

#include <chrono>
#include <string_view>

#include "rewrite/prompt_cache/prefix_tracker.hpp"
#include "rewrite/control_group.hpp"
#include "rewrite/cost/ledger.hpp"
#include "rewrite/cost/prices.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/page_in/page_in.hpp"
#include "telemetry/metric_catalogue.hpp"
#include "telemetry/span.hpp"

namespace gistproxy::proxy {

// gistproxy_rewrite_failures_total{reason}: each a degraded mode in which the
// client's (or the upstream's) bytes went on as they were.
namespace degraded {
inline constexpr std::string_view unparsable = "unparsable";            // request body not JSON we can scan
inline constexpr std::string_view unsupported_encoding = "unsupported_encoding";
inline constexpr std::string_view corrupt_encoding = "corrupt_encoding";
inline constexpr std::string_view too_large = "too_large";              // output over --max-blob-bytes
inline constexpr std::string_view lossy = "lossy";                      // output not valid UTF-8
inline constexpr std::string_view store_error = "store_error";
inline constexpr std::string_view store_full = "store_full";            // the store at --store-max-bytes: output left inline
inline constexpr std::string_view internal = "internal";                // the rewrite threw
inline constexpr std::string_view answer_unparsed = "answer_unparsed";  // a JSON answer we could not follow
inline constexpr std::string_view stream_unparsed = "stream_unparsed";  // a stream switched to pass-through
inline constexpr std::string_view page_in_continue = "page_in_continue";  // the next hop's body could not be built
// An answer gistproxy could not follow (Gemini streams without alt=sse,
// Responses background:true): no offload, no read_blob offered.
inline constexpr std::string_view uninterceptable_answer = "uninterceptable_answer";
// A body the client signed (AWS SigV4) and gistproxy may not sign again:
// forwarded byte for byte. The same name as the span's gistproxy.handling
// (rewrite::label(handling_why::client_signed)): one fact, one label.
inline constexpr std::string_view client_signed = "client_signed";
// The client asked for its request to pass untouched (x-gistproxy-bypass).
inline constexpr std::string_view bypass = "bypass";
// A read of Responses' stored state gistproxy cannot show as the client's:
// a turn it never saw or forgot that shows read_blob, or an answer of a
// shape it cannot follow (stored_state.hpp). Relayed as sent.
inline constexpr std::string_view stored_unmapped = "stored_unmapped";
}  // namespace degraded

// gistproxy_rewrites_total{outcome}
namespace rewrite_outcome_label {
inline constexpr std::string_view rewritten = "rewritten";
inline constexpr std::string_view unchanged = "unchanged";
inline constexpr std::string_view failed = "failed";
}  // namespace rewrite_outcome_label

// gistproxy_page_ins_total{result} beyond the store's own results.
namespace page_in_result {
inline constexpr std::string_view ok = "ok";
inline constexpr std::string_view bad_request = "bad_request";  // arguments the model got wrong
inline constexpr std::string_view hop_limit = "hop_limit";      // calls made past --max-page-in-hops
}  // namespace page_in_result

// gistproxy_outputs_kept_inline_total{cause}: outputs over the threshold left inline.
namespace kept_inline_cause {
inline constexpr std::string_view churn = "churn";  // the model kept reading them back
}  // namespace kept_inline_cause

// gistproxy_turn_memory_bytes_total{part}: request bytes shared with the conversation's previous turn, or not.
namespace turn_memory_kind {
inline constexpr std::string_view shared = "shared";
inline constexpr std::string_view fresh = "new";
}  // namespace turn_memory_kind

// gistproxy_upstream_connections_total{result} the exchange counts (the pool counts new and reused).
namespace upstream_connection_result {
inline constexpr std::string_view retried = "retried";  // a stale keep-alive connection, tried again
}  // namespace upstream_connection_result

class exchange_stats {
 public:
  // `source`: proxy, or api (the offload service): offloads and page-ins say which.
  exchange_stats(telemetry::metric_catalogue& m, std::string_view api, std::string_view source = "proxy")
      : metrics_(m), api_(api), source_(source) {}

  std::string_view api() const { return api_; }
  void set_api(std::string_view api) { api_ = api; }
  void degraded_mode(std::string_view reason, std::uint64_t n = 1);
  void rewrite_outcome(std::string_view outcome);
  void calls_past_hop_limit(std::uint64_t n);
  void page_in_hops(int hops);
  // One read_blob answer: page-in counters, integrity failures, tokens returned.
  void page_in(const rewrite::page_result& r, bool churn, std::uint64_t tokens);
  // Stored blobs a put found damaged and replaced from the request's bytes.
  void blobs_found_damaged(std::uint64_t n);
  // One offloaded output.
  void offloads(const std::vector<rewrite::offload_record>& records);  // one turn's
  // One finished request: its count by status, durations, bytes and error,
  // by api and experiment group (the count by protocol too).
  struct finished_request {
    std::string_view status, group, protocol;
    std::chrono::nanoseconds total{}, upstream_wait{};
    std::uint64_t bytes_in = 0, bytes_out = 0;
    std::string_view error_source, error_type;  // empty: the request did not fail
  };
  void request_finished(const finished_request& r);
  // The rewrite's choices on a turn: outputs kept inline (by cause), why
  // read_blob is offered or not, outputs the cost model kept inline.
  void kept_inline(std::string_view cause, std::uint64_t n);
  void read_blob_offer(std::string_view reason);
  void outputs_not_worth_offloading(std::uint64_t n);
  // The turn memory's view of a body: bytes shared with the previous turn and new ones.
  void turn_memory_bytes(std::uint64_t shared, std::uint64_t fresh);
  // The upstream hop: a stale connection retried; an answer decoded from `coding`.
  void upstream_connection_retried();
  void upstream_answer_decoded(std::string_view coding);
  // The live prefix check's verdict on a turn: a break is counted by cause
  // and named on the request span; anything else is not a break.
  void prefix_verdict(rewrite::prefix_verdict verdict, rewrite::experiment_group group, telemetry::span& s);
  telemetry::metric_catalogue& metrics() { return metrics_; }

  static std::string_view result_label(const rewrite::page_result& r);
  // A request's token usage, summed over its hops: tokens and prompt-cache counters.
  static void count_usage(telemetry::metric_catalogue& m, std::string_view api, std::string_view group,
                          const rewrite::token_usage& usage);
  // What a request cost and what offloading saved and added, in USD; false
  // when the model has no price (counted as unpriced, never as $0). A price
  // found by family fallback puts the entry used on the span
  // (gistproxy.priced_as), so the estimate is said as one.
  struct offload_tally {
    std::uint64_t tokens_saved = 0, tool_tokens = 0, paged_in_tokens = 0;
  };
  static bool count_cost(telemetry::metric_catalogue& m, telemetry::span& s, std::string_view api, std::string_view group,
                         const rewrite::price_match* match, const rewrite::token_usage& usage, const offload_tally& offload);
  // The request's ledger entry (what "saved" means everywhere) from each
  // hop's usage: on the ledger counters and the span; unmeasured when a hop
  // reported no usage.
  static rewrite::ledger_entry count_ledger(telemetry::metric_catalogue& m, telemetry::span& s, std::string_view api,
                                           const rewrite::price_match* match,
                                           std::span<const rewrite::token_usage> hop_usage,
                                           const rewrite::request_changes& changes);
  // Usage as OpenTelemetry GenAI span attributes (cache reads and writes
  // under the conventions' names; both are included in input_tokens).
  static void set_usage_attributes(telemetry::span& s, const rewrite::token_usage& usage);

 private:
  telemetry::metric_catalogue& metrics_;
  std::string_view api_;
  std::string_view source_;
};

}  // namespace gistproxy::proxy
