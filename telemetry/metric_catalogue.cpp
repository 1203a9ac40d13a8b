#include "telemetry/metric_catalogue.hpp"

namespace gistproxy::telemetry {

metric_catalogue::metric_catalogue(registry& r)
    : requests(r.add_counter("gistproxy_requests_total",
                             "Requests proxied, by endpoint (its metric label), HTTP status, group (control, treated) and the client's "
                             "protocol (HTTP/1.1, HTTP/1.0, HTTP/2).",
                             {"api", "status", "group", "protocol"})),
      request_duration(r.add_histogram("gistproxy_request_duration_seconds",
                                       "Whole request time as the client sees it, by API and group.", {"api", "group"},
                                       latency_buckets())),
      upstream_duration(r.add_histogram("gistproxy_upstream_duration_seconds",
                                        "Time spent waiting on the upstream (connect, send, receive), by API and group.",
                                        {"api", "group"}, latency_buckets())),
      proxy_overhead(r.add_histogram("gistproxy_proxy_overhead_seconds",
                                     "Time the proxy itself added: request time not spent waiting on the upstream.",
                                     {"api", "group"}, latency_buckets())),
      request_bytes(r.add_counter("gistproxy_request_bytes_total", "Request body bytes received from clients.",
                                  {"api", "group"})),
      response_bytes(r.add_counter("gistproxy_response_bytes_total", "Response body bytes sent to clients.",
                                   {"api", "group"})),
      active_connections(r.add_gauge("gistproxy_active_connections", "Open client connections.")),
      active_requests(r.add_gauge("gistproxy_active_requests", "Requests in flight.")),
      h2_streams(r.add_counter("gistproxy_h2_streams_total", "HTTP/2 request streams served (each one exchange).")),
      h2_refusals(r.add_counter("gistproxy_h2_refusals_total",
                                "HTTP/2 connections ended or streams reset to bound a hostile client, by reason: "
                                "rapid_reset (GOAWAY ENHANCE_YOUR_CALM), flood (SETTINGS, PING or CONTINUATION), "
                                "header_list (a stream's header list over the limit), field_size (one field over "
                                "65,533 bytes, cookie crumbs joined), protocol (malformed frames), body_budget (a "
                                "stream refused while the connection's bodies in flight are over budget), "
                                "stream_limit (a stream refused while the connection's streams, with the work of "
                                "reset ones still running, are at the limit).",
                                {"reason"})),
      websockets(r.add_counter("gistproxy_websockets_total",
                               "WebSocket upgrades asked of a Responses path, by result: accepted (both legs open), "
                               "refused (the upstream's own refusal relayed with its status, so the client falls back "
                               "at once), failed (no upstream answered: gistproxy's error relayed).",
                               {"result"})),
      websocket_messages(r.add_counter("gistproxy_websocket_messages_total",
                                       "Client WebSocket messages, by kind: create (a response.create run through the "
                                       "proxy path), other (another message type, forwarded as it is), refused (not a "
                                       "JSON object with a type: answered with an error event), binary (closed 1003); and the "
                                       "upstream's messages outside a response: upstream_relayed (sent to the client as "
                                       "they came), upstream_dropped (over the 16 waiting for the client).",
                                       {"kind"})),
      websocket_closes(r.add_counter("gistproxy_websocket_closes_total",
                                     "WebSocket closes, by who closed (client, upstream, gistproxy) and close code "
                                     "(normal 1000, going_away 1001 on drain, unsupported 1003, too_big 1009, "
                                     "internal 1011, gone: the TCP connection ended without a close, other).",
                                     {"side", "code"})),
      active_websockets(r.add_gauge("gistproxy_active_websockets", "Open client WebSockets (each with its upstream socket).")),
      session_failures(r.add_counter("gistproxy_session_failures_total",
                                     "Failures that escaped a connection's work (a bug, or memory ran out) and ended "
                                     "that connection or stream only, by transport (http1, h2, admin, any) and where "
                                     "(session, stream, writer, callback, event_loop).",
                                     {"transport", "where"})),
      tls_handshakes(r.add_counter("gistproxy_tls_handshakes_total",
                                   "TLS handshakes on the client listener, by result: ok, timeout (not finished "
                                   "within --client-timeout), client_certificate (missing or not from "
                                   "--tls-client-ca), failed (any other refusal).",
                                   {"result"})),
      tls_reloads(r.add_counter("gistproxy_tls_reloads_total",
                                "Reloads of the client listener's certificate (SIGHUP or a file change), by result "
                                "(ok; refused: the identity in use kept serving).",
                                {"result"})),
      tls_certificate_expiry(r.add_gauge("gistproxy_tls_certificate_expiry_timestamp_seconds",
                                         "When the client listener's certificate expires (Unix seconds; 0 without TLS).")),
      errors(r.add_counter("gistproxy_errors_total", "Failed requests by error source, type and group.",
                           {"source", "type", "group"})),
      upstream_connections(r.add_counter("gistproxy_upstream_connections_total",
                                         "Upstream connections used, by result (new, reused, retried).",
                                         {"result"})),
      upstream_connections_discarded(r.add_counter(
          "gistproxy_upstream_connections_discarded_total",
          "Upstream connections closed instead of reused because something was left after an answer "
          "(leftover: bytes past its end; unframed: a HEAD, 1xx, 204 or 304 answer, or one without a length or chunking).",
          {"reason"})),
      upstream_answers_decoded(r.add_counter(
          "gistproxy_upstream_answers_decoded_total",
          "Compressed upstream answers decoded so read_blob calls could be intercepted, by coding.", {"coding"})),
      accept_paused(r.add_counter(
          "gistproxy_accept_paused_total",
          "Times a listener stopped accepting, by reason: limit (--max-connections reached; new clients "
          "wait in the backlog), descriptors (the process or system is out of file descriptors; either listener), "
          "error, admin_limit (the admin listener at --admin-max-connections closed its least recently active "
          "connection for a new one).",
          {"reason"})),
      accept_shed(r.add_counter(
          "gistproxy_accept_shed_total",
          "Clients answered 503 (Retry-After: 1) and closed at once because the process was out of file "
          "descriptors: accepted on the listener's reserve descriptor instead of left waiting in the backlog, by "
          "listener (proxy, admin).",
          {"listener"})),
      offloads(r.add_counter("gistproxy_offloads_total",
                             "Tool outputs offloaded to the blob store, by API, content kind and source (proxy: "
                             "traffic through the proxy; api: POST /v1/offload).",
                             {"api", "kind", "source"})),
      offload_tokens_before(r.add_counter("gistproxy_offload_tokens_before_total",
                                          "Estimated tokens of offloaded tool outputs (what the window would hold).",
                                          {"api"})),
      offload_tokens_after(r.add_counter("gistproxy_offload_tokens_after_total",
                                         "Estimated tokens of the references that replaced them.", {"api"})),
      offloaded_bytes(r.add_counter("gistproxy_offloaded_bytes_total", "Exact bytes of offloaded tool outputs.",
                                    {"api"})),
      dedupe_hits(r.add_counter("gistproxy_dedupe_hits_total",
                                "Offloads whose bytes were already stored (nothing written).", {"api"})),
      rewrites(r.add_counter("gistproxy_rewrites_total", "Requests seen by the rewriter, by API and outcome.",
                             {"api", "outcome"})),
      rewrite_failures(r.add_counter("gistproxy_rewrite_failures_total",
                                     "Requests or outputs left as sent because the rewriter could not do its job.",
                                     {"api", "reason"})),
      read_blob_offers(r.add_counter("gistproxy_read_blob_offers_total",
                                     "Requests by the cost model's decision on offering read_blob "
                                     "(--inject-read-blob=auto): head, output_pays, offered_before (an earlier turn offered it: "
                                     "it stays), already_offered, reference_resolves, age_pays, not_worth.",
                                     {"api", "decision"})),
      outputs_not_worth_offloading(r.add_counter("gistproxy_outputs_not_worth_offloading_total",
                                                 "Tool outputs over the threshold left inline because offloading "
                                                 "would not pay in their conversation (yet).",
                                                 {"api"})),
      outputs_kept_inline(r.add_counter("gistproxy_outputs_kept_inline_total",
                                        "Tool outputs over the threshold left inline, per request, by cause: churn "
                                        "(its conversation re-reads: an output was read back on more than "
                                        "--churn-max-read-backs turns; this one was read back, or never offloaded).",
                                        {"api", "cause"})),
      turn_memory_bytes(r.add_counter("gistproxy_turn_memory_bytes_total",
                                      "Request bytes of bodies the turn memory looked up (16 KB and more): shared with "
                                      "the conversation's previous turn (reused: not scanned, decoded or hashed again) or new.",
                                      {"api", "part"})),
      page_ins(r.add_counter("gistproxy_page_ins_total",
                             "read_blob calls answered by the proxy, by API, mode, result and source (proxy: the "
                             "model's calls; api: GET /v1/blobs).",
                             {"api", "mode", "result", "source"})),
      page_in_hops(r.add_histogram("gistproxy_page_in_hops", "Extra upstream hops a request needed for read_blob calls.",
                                   {"api"}, {0, 1, 2, 3, 4, 6, 8})),
      paging_churn(r.add_counter("gistproxy_paging_churn_total",
                                 "Page-ins of a blob offloaded in the same or the previous turn (it belonged in the window).",
                                 {"api"})),
      integrity_failures(r.add_counter("gistproxy_integrity_failures_total",
                                       "Stored blobs found damaged: page-ins refused because the bytes failed their SHA-256 "
                                       "check, and blob files a put found cut or damaged and replaced from the request's bytes.",
                                       {"api"})),
      paged_in_tokens(r.add_counter("gistproxy_paged_in_tokens_total",
                                    "Estimated tokens paged back into the conversation.", {"api"})),
      input_tokens(r.add_counter("gistproxy_input_tokens_total",
                                 "Input tokens the upstream reported, summed over a request's hops.", {"api", "group"})),
      output_tokens(r.add_counter("gistproxy_output_tokens_total",
                                  "Output tokens the upstream reported, summed over a request's hops.", {"api", "group"})),
      prompt_cache_tokens(r.add_counter(
          "gistproxy_prompt_cache_tokens_total",
          "Input tokens by provider prompt-cache outcome (read, write, uncached), summed over a request's hops.",
          {"api", "kind", "group"})),
      prefix_breaks(r.add_counter("gistproxy_prefix_breaks_total",
                                  "Turns whose forwarded prefix (tools, system, earlier messages) did not extend the "
                                  "conversation's previous turn, by cause: client, proxy (gistproxy's rewrite alone "
                                  "changed it), budget (budget-mode eviction).",
                                  {"api", "cause", "group"})),
      cost_usd(r.add_amount_counter("gistproxy_cost_usd_total",
                                    "What requests cost in USD by API, kind of token (input, cache_read, cache_write, "
                                    "output) and group, from the upstream's usage and the price table.",
                                    {"api", "kind", "group"})),
      saved_usd(r.add_amount_counter("gistproxy_saved_usd_total",
                                     "USD offloading saved before its overhead: tokens removed from requests, at the "
                                     "model's uncached input price. Net savings: minus gistproxy_offload_overhead_usd_total.",
                                     {"api"})),
      offload_overhead_usd(r.add_amount_counter(
          "gistproxy_offload_overhead_usd_total",
          "USD offloading added, at the model's uncached input price, by kind: the read_blob definition "
          "(read_blob_definition) and the tokens read_blob answers put back (paged_in).",
          {"api", "kind"})),
      unpriced_requests(r.add_counter("gistproxy_unpriced_requests_total",
                                      "Requests with usage whose model has no price in the table (not counted as $0).",
                                      {"api", "group"})),
      estimated_price_requests(r.add_counter(
          "gistproxy_estimated_price_requests_total",
          "Requests with usage whose model the price table does not list, priced as its family's nearest listed "
          "member (the span's gistproxy.priced_as): their dollars are an estimate.",
          {"api", "group"})),
      ledger_input_tokens(r.add_counter(
          "gistproxy_ledger_input_tokens_total",
          "Input tokens by side: without (the client's requests as sent, each offloaded output put back and "
          "read_blob's definition taken out) and with (every upstream request gistproxy made, page-in hops "
          "included, as the provider reported). Saved = without - with. Requests with usage only.",
          {"api", "side"})),
      ledger_usd(r.add_amount_counter("gistproxy_ledger_usd_total",
                                      "USD by side (without, with; as gistproxy_ledger_input_tokens_total, output "
                                      "included), priced with the provider's cache rules. Priced requests only.",
                                      {"api", "side"})),
      unmeasured_requests(r.add_counter("gistproxy_unmeasured_requests_total",
                                        "Requests an upstream answer of which carried no usage: in no ledger figure.",
                                        {"api"})),
      records(r.add_counter("gistproxy_records_total",
                            "Exchanges the --record file received, by result: written (whole and readable), dropped (queue "
                            "full), failed (the write failed, e.g. a full disk: rolled back, nothing partial left), and "
                            "rotation_failed (the file could not be renamed to FILE.1: kept, appended to, never truncated).",
                            {"result"})),
      store_operations(r.add_counter("gistproxy_store_operations_total",
                                     "Calls to the remote (S3) blob store, by operation and result.", {"op", "result"})),
      store_operation_duration(r.add_histogram("gistproxy_store_operation_duration_seconds",
                                               "Latency of remote (S3) blob store calls, retries included, by operation.",
                                               {"op"}, latency_buckets())),
      spans_exported(r.add_counter("gistproxy_spans_exported_total", "Spans written by each exporter.",
                                   {"exporter"})),
      spans_dropped(r.add_counter("gistproxy_exporter_dropped_spans_total",
                                  "Spans an exporter dropped, by exporter and reason.", {"exporter", "reason"})),
      build_info(r.add_gauge("gistproxy_build_info", "Always 1; the version label says which build runs.",
                             {"version"})) {
  build_info.labels({GISTPROXY_VERSION}).set(1);
  for (std::string_view reason : {"leftover", "unframed"}) upstream_connections_discarded.labels({reason});
  for (std::string_view result : {"written", "dropped", "failed", "rotation_failed"}) records.labels({result});
  for (std::string_view coding : {"gzip", "deflate", "br", "zstd"}) upstream_answers_decoded.labels({coding});
  for (std::string_view reason : {"limit", "descriptors", "error", "admin_limit"}) accept_paused.labels({reason});
  for (std::string_view listener : {"proxy", "admin"}) accept_shed.labels({listener});
}

void metric_catalogue::initialise_api_series(const std::vector<std::string_view>& apis) {
  for (std::string_view api : apis) {
    for (auto* f : {&offload_tokens_before, &offload_tokens_after, &offloaded_bytes, &dedupe_hits, &paging_churn,
                    &integrity_failures, &paged_in_tokens})
      f->labels({api});
    for (std::string_view group : {"treated", "control"}) {
      input_tokens.labels({api, group});
      output_tokens.labels({api, group});
      for (std::string_view kind : {"read", "write", "uncached"}) prompt_cache_tokens.labels({api, kind, group});
      for (std::string_view kind : {"input", "cache_read", "cache_write", "output"}) cost_usd.labels({api, kind, group});
      unpriced_requests.labels({api, group});
      estimated_price_requests.labels({api, group});
      for (std::string_view cause : {"client", "proxy", "budget", "age", "offer", "churn"}) prefix_breaks.labels({api, cause, group});
    }
    saved_usd.labels({api});
    for (std::string_view side : {"without", "with"}) ledger_input_tokens.labels({api, side}), ledger_usd.labels({api, side});
    unmeasured_requests.labels({api});
    for (std::string_view kind : {"read_blob_definition", "paged_in"}) offload_overhead_usd.labels({api, kind});
    rewrite_failures.labels({api, "store_error"});
    rewrite_failures.labels({api, "store_full"});
    for (std::string_view decision : {"head", "output_pays", "offered_before", "already_offered", "not_worth"})
      read_blob_offers.labels({api, decision});
    outputs_not_worth_offloading.labels({api});
    outputs_kept_inline.labels({api, "churn"});
    for (std::string_view part : {"shared", "new"}) turn_memory_bytes.labels({api, part});
    page_ins.labels({api, "full", "io", "proxy"});
  }
  for (std::string_view result : {"accepted", "refused", "failed"}) websockets.labels({result});
  for (std::string_view kind : {"create", "other", "refused", "binary"}) websocket_messages.labels({kind});
  // The remote store's calls (all 0 with a filesystem store): the store panels
  // and rates see every operation from the first scrape.
  for (std::string_view op : {"put", "get", "head", "list", "refresh"}) {
    store_operation_duration.labels({op});
    for (std::string_view result : {"ok", "unreachable", "server_error"}) store_operations.labels({op, result});
  }
}

void metric_catalogue::initialise_exporter_series(std::string_view exporter) {
  spans_exported.labels({exporter});
  for (std::string_view reason : {"queue_full", "export_failed"}) spans_dropped.labels({exporter, reason});
}

}  // namespace gistproxy::telemetry
