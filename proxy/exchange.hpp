// One request's journey through the proxy, phase by phase:
//
//   receive  → identify the API dialect, model and conversation trace
//   rewrite  → offload oversized tool outputs to the blob store (fail-open)
//   forward  → send upstream over a pooled connection (one retry on a stale one)
//   respond  → stream the response back as it arrives (SSE event by event)
//   finish   → end spans, record metrics, write the access log line
//
// Every failure funnels into respond_error (before the response started) or
// an abnormal end of the client's response (after), never a silent clean end.
// A client that disconnects cancels the upstream request.
#pragma once

#include <chrono>
#include <optional>

#include "proxy/beast.hpp"
#include "proxy/proxy_error.hpp"
#include "proxy/services.hpp"
#include "rewrite/dialect.hpp"
#include "telemetry/span.hpp"
#include "telemetry/trace_context.hpp"

namespace gistproxy::proxy {

using client_request = http::request<http::string_body>;

// Everything the phases know about one request.
struct request_context {
  explicit request_context(client_request& r) : request(r) {}

  client_request& request;
  const rewrite::dialect* dialect = nullptr;
  std::optional<rewrite::request_facts> facts;
  std::string_view api = "other";
  telemetry::span span;  // gistproxy.request
  std::optional<telemetry::trace_parent> client_parent;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::chrono::nanoseconds upstream_wait{0};
  int status = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::optional<proxy_error> error;
  rewrite::token_usage usage;
  // Rewrite phase: the body to forward when it differs from the client's.
  std::string tenant;
  std::optional<std::string> rewritten_body;
  std::string read_blob_name;  // the paging tool's name in this request
  bool body_encoded = false;   // a Content-Encoding we could not decode: forwarded as is
  bool keep_alive = true;         // the client connection may serve another request
  bool response_started = false;  // a status line reached the client
};

class client_watch;

class exchange {
 public:
  exchange(shard& s, beast::tcp_stream& client) : shard_(s), svc_(s.svc()), client_(client) {}

  // Runs all phases for one request; returns whether the connection may be reused.
  awaitable<bool> run(client_request& request);
  // Writes an error response for a request that never reached the phases (400, 413, …).
  awaitable<void> reject(client_request& request, proxy_error e);

 private:
  void receive(request_context& ctx);
  bool decode_body(request_context& ctx);
  awaitable<void> rewrite(request_context& ctx);
  void record_rewrite(request_context& ctx, const rewrite::rewrite_report& report);
  awaitable<void> forward(request_context& ctx, client_watch& watch);
  awaitable<void> respond(request_context& ctx, upstream_connection& conn,
                          http::response_parser<http::empty_body>& head, telemetry::span& upstream_span,
                          bool& reusable);
  awaitable<void> respond_error(request_context& ctx, proxy_error e);
  void finish(request_context& ctx);

  shard& shard_;
  services& svc_;
  beast::tcp_stream& client_;
};

}  // namespace gistproxy::proxy
