// Every metric gistproxy exports, declared in one place. Dashboards, alert
// rules and tests use only these names.
#pragma once

#include "telemetry/metrics.hpp"

namespace gistproxy::telemetry {

struct metric_catalogue {
  explicit metric_catalogue(registry& r);

  // Requests by endpoint label (chat, responses, messages, azure-chat, …) and HTTP status.
  family<counter>& requests;
  family<histogram>& request_duration;   // accept of headers .. last byte written
  family<histogram>& upstream_duration;  // time spent waiting on the upstream
  family<histogram>& proxy_overhead;     // request_duration minus upstream wait
  family<counter>& request_bytes;
  family<counter>& response_bytes;
  family<gauge>& active_connections;
  family<gauge>& active_requests;
  // HTTP/2 (h2c): request streams served, and connections or streams
  // refused by reason (rapid_reset, flood, header_list, protocol, body_budget).
  family<counter>& h2_streams;
  family<counter>& h2_refusals;
  // WebSocket (the Responses API's socket mode): upgrades by result, client
  // messages by kind, closes by side and code, and the sockets open now.
  family<counter>& websockets;
  family<counter>& websocket_messages;
  family<counter>& websocket_closes;
  family<gauge>& active_websockets;
  // Failures that escaped a connection's work, by transport and where.
  family<counter>& session_failures;
  // TLS on the client listener: handshakes by result, certificate reloads
  // by result, and the served certificate's expiry.
  family<counter>& tls_handshakes;
  family<counter>& tls_reloads;
  family<gauge>& tls_certificate_expiry;
  // Errors by source (downstream, upstream, internal) and type (e.g. upstream_timeout).
  family<counter>& errors;
  // Upstream connections by result: new, reused, retried (stale keep-alive).
  family<counter>& upstream_connections;
  family<counter>& upstream_connections_discarded;
  family<counter>& upstream_answers_decoded;
  family<counter>& accept_paused;
  family<counter>& accept_shed;  // clients answered 503 at once, out of descriptors, by listener
  // Offload (one series per API dialect).
  family<counter>& offloads;               // by api, content kind and source (proxy, api)
  family<counter>& offload_tokens_before;  // estimated tokens of offloaded outputs
  family<counter>& offload_tokens_after;   // estimated tokens of their references
  family<counter>& offloaded_bytes;        // exact bytes of offloaded outputs
  family<counter>& dedupe_hits;            // offloads whose bytes were already stored
  family<counter>& rewrites;               // requests by outcome: rewritten, unchanged, failed
  // Degraded modes, by reason: unparsable, unsupported_encoding, store_error,
  // too_large, lossy. The request is forwarded as the client sent it.
  family<counter>& rewrite_failures;
  // --inject-read-blob=auto: requests by the cost model's decision: head
  // (offered from the start), output_pays, already_offered, not_worth (sent
  // as is; its outputs over the threshold stay inline).
  family<counter>& read_blob_offers;
  family<counter>& outputs_not_worth_offloading;  // outputs over the threshold the cost model kept inline
  family<counter>& outputs_kept_inline;           // outputs over the threshold kept inline, by cause (churn)
  family<counter>& turn_memory_bytes;             // request bytes the turn memory saw, shared with the previous turn or not

  // Page-in (read_blob interception).
  family<counter>& page_ins;            // by api, mode (full, pattern, range), result and source (proxy, api)
  family<histogram>& page_in_hops;      // extra upstream hops per intercepted request
  family<counter>& paging_churn;        // page-ins of blobs offloaded this or the previous turn
  family<counter>& integrity_failures;  // page-ins refused because the re-hash failed
  family<counter>& paged_in_tokens;     // estimated tokens returned to the model

  // Token usage the upstream reported, summed over every hop of a request.
  family<counter>& input_tokens;
  family<counter>& output_tokens;
  // The input tokens by prompt-cache outcome: read, write, uncached (they sum
  // to input_tokens where the API reports its cache).
  family<counter>& prompt_cache_tokens;
  // Turns whose forwarded prefix did not extend the conversation's previous
  // turn (a prompt-cache bust), by cause: client, proxy (a defect) or budget
  // (budget-mode eviction).
  family<counter>& prefix_breaks;
  // Dollars, from the upstream's usage and the price table: what requests
  // cost by kind of token (input, cache_read, cache_write, output); what
  // offloading saved (tokens removed, at the model's input price) and what it
  // cost (the read_blob definition and paged-in tokens, by kind): net savings
  // are saved - overhead (two counters, since a request can cost more than it
  // saves and a counter cannot go down); requests whose model has no price
  // (never counted as $0).
  family<amount_counter>& cost_usd;
  family<amount_counter>& saved_usd;
  family<amount_counter>& offload_overhead_usd;
  family<counter>& unpriced_requests;
  family<counter>& estimated_price_requests;  // priced as the model's family (price_match::fallback)
  // The ledger of "saved" (rewrite/cost/ledger.hpp), the one definition every
  // meter shows: input tokens and USD "without" (the client's requests as
  // sent, cache priced) and "with" (every upstream request gistproxy made for
  // them, page-in hops included, from the provider's usage), by side;
  // requests whose answer carried no usage are counted apart, in neither.
  family<counter>& ledger_input_tokens;
  family<amount_counter>& ledger_usd;
  family<counter>& unmeasured_requests;

  // serve --record: exchanges written or dropped (queue full, write error).
  family<counter>& records;

  // Remote blob store (s3://) calls by operation (put, head, get, list,
  // delete, refresh) and result (ok, not_found, exists, client_error,
  // server_error, unreachable), and their latency (retries included).
  family<counter>& store_operations;
  family<histogram>& store_operation_duration;

  family<counter>& spans_exported;  // by exporter: span_log, otlp
  family<counter>& spans_dropped;   // by exporter and reason: queue_full, export_failed
  family<gauge>& build_info;

  // Creates the per-API series that alerts and ratios watch, at 0, so that the
  // first event is a visible increase (increase() cannot see a series whose
  // first sample is already 1).
  void initialise_api_series(const std::vector<std::string_view>& apis);
  // The same for an exporter's drop reasons.
  void initialise_exporter_series(std::string_view exporter);
};

}  // namespace gistproxy::telemetry
