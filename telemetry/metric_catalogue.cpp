#include "telemetry/metric_catalogue.hpp"

namespace gistproxy::telemetry {

metric_catalogue::metric_catalogue(registry& r)
    : requests(r.add_counter("gistproxy_requests_total", "Requests proxied, by API dialect and HTTP status.",
                             {"api", "status"})),
      request_duration(r.add_histogram("gistproxy_request_duration_seconds",
                                       "Whole request time as the client sees it, by API.", {"api"},
                                       latency_buckets())),
      upstream_duration(r.add_histogram("gistproxy_upstream_duration_seconds",
                                        "Time spent waiting on the upstream (connect, send, receive), by API.",
                                        {"api"}, latency_buckets())),
      proxy_overhead(r.add_histogram("gistproxy_proxy_overhead_seconds",
                                     "Time the proxy itself added: request time not spent waiting on the upstream.",
                                     {"api"}, latency_buckets())),
      request_bytes(r.add_counter("gistproxy_request_bytes_total", "Request body bytes received from clients.",
                                  {"api"})),
      response_bytes(r.add_counter("gistproxy_response_bytes_total", "Response body bytes sent to clients.",
                                   {"api"})),
      active_connections(r.add_gauge("gistproxy_active_connections", "Open client connections.")),
      active_requests(r.add_gauge("gistproxy_active_requests", "Requests in flight.")),
      errors(r.add_counter("gistproxy_errors_total", "Failed requests by error source and type.",
                           {"source", "type"})),
      upstream_connections(r.add_counter("gistproxy_upstream_connections_total",
                                         "Upstream connections used, by result (new, reused, retried).",
                                         {"result"})),
      offloads(r.add_counter("gistproxy_offloads_total", "Tool outputs offloaded to the blob store, by API and content kind.",
                             {"api", "kind"})),
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
      spans_exported(r.add_counter("gistproxy_spans_exported_total", "Spans written by each exporter.",
                                   {"exporter"})),
      spans_dropped(r.add_counter("gistproxy_exporter_dropped_spans_total",
                                  "Spans an exporter dropped, by exporter and reason.", {"exporter", "reason"})),
      build_info(r.add_gauge("gistproxy_build_info", "Always 1; the version label says which build runs.",
                             {"version"})) {
  build_info.labels({GISTPROXY_VERSION}).set(1);
}

}  // namespace gistproxy::telemetry
