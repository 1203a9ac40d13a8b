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
      spans_exported(r.add_counter("gistproxy_spans_exported_total", "Spans written by each exporter.",
                                   {"exporter"})),
      spans_dropped(r.add_counter("gistproxy_exporter_dropped_spans_total",
                                  "Spans an exporter dropped, by exporter and reason.", {"exporter", "reason"})),
      build_info(r.add_gauge("gistproxy_build_info", "Always 1; the version label says which build runs.",
                             {"version"})) {
  build_info.labels({GISTPROXY_VERSION}).set(1);
}

}  // namespace gistproxy::telemetry
