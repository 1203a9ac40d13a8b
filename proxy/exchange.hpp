// One request's journey through the proxy, phase by phase:
//
//   receive  → identify the API dialect, model and conversation trace
//   rewrite  → offload oversized tool outputs to the blob store (fail-open)
//   forward  → send upstream over a pooled connection (one retry on a stale one)
//   page in  → a JSON answer with read_blob calls is resolved from the blob
//              store and re-sent upstream (up to --max-page-in-hops); the
//              client only ever sees the final answer, usage summed
//   respond  → stream the response back as it arrives (SSE event by event)
//   finish   → end spans, record metrics, write the access log line
//
// Every failure funnels into respond_error (before the response started) or
// an abnormal end of the client's response (after), never a silent clean end.
// A client that disconnects cancels the upstream request.
#pragma once

#include <chrono>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "proxy/beast.hpp"
#include "proxy/proxy_error.hpp"
#include "proxy/services.hpp"
#include "rewrite/dialect.hpp"
#include "rewrite/intercept/stream_filter.hpp"
#include "rewrite/page_in/page_in.hpp"
#include "rewrite/sse/event_parser.hpp"
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
  bool body_encoded = false;   // a Content-Encoding we could not decode: forwarded as is
  std::string intercept_tool;  // read_blob's name when the request offers it (else empty)
  std::uint64_t turn = 0;      // this request's turn in its trace (paging churn)
  bool keep_alive = true;         // the client connection may serve another request
  bool response_started = false;  // a status line reached the client
  bool chunked_response = true;   // spliced streams: false for HTTP/1.0 clients (close-delimited)
  int hops = 0;                   // extra upstream hops for read_blob calls
  // --record: the response bytes the client received (capped), when recording.
  std::optional<std::string> recorded_response;
  bool recorded_truncated = false;
  void capture_response(std::string_view bytes) {
    if (!recorded_response) return;
    auto room = record_response_limit - std::min(record_response_limit, recorded_response->size());
    if (bytes.size() > room) recorded_truncated = true;
    recorded_response->append(bytes.substr(0, room));
  }
  static constexpr std::size_t record_response_limit = 8u << 20;
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

  struct upstream_reply {
    std::unique_ptr<upstream_connection> conn;
    std::unique_ptr<http::response_parser<http::empty_body>> head;  // Beast parsers do not move
    std::optional<proxy_error> failure;
  };
  // State of the read_blob resolution loop across hops.
  struct page_in_state {
    int hops = 0;                      // extra upstream hops made
    nlohmann::json usage_sum;          // usage of the hops before the final one
    std::map<std::string, rewrite::call_result> answered;  // arguments → first answer
    std::optional<std::string> final_body;  // the client's answer when it differs from the last hop's bytes
    rewrite::token_usage hop_usage;    // usage of the hop just read
  };
  telemetry::span start_upstream_span(request_context& ctx, const http_url& target, int hop);
  void end_upstream_span(telemetry::span& up_span, int status, const rewrite::token_usage& usage);
  awaitable<upstream_reply> send_upstream(request_context& ctx, upstream_pool& pool, const std::string& body,
                                          telemetry::span& up_span, client_watch& watch);
  bool interceptable(const request_context& ctx, const http::response_parser<http::empty_body>& head) const;
  awaitable<std::unique_ptr<http::response_parser<http::string_body>>> read_whole_body(
      request_context& ctx, upstream_connection& conn, http::response_parser<http::empty_body>& head,
      telemetry::span& up_span, bool& reusable);
  awaitable<void> write_whole_response(request_context& ctx, const http::response<http::string_body>& from,
                                       const std::string& body);
  // Resolves the read_blob calls of one hop's answer; returns the next hop's
  // request body, or nullopt when this answer is the final one.
  awaitable<std::optional<std::string>> page_in_hop(request_context& ctx,
                                                    http::response_parser<http::string_body>& answer,
                                                    const std::string& sent_body, int hop, page_in_state& paging);
  awaitable<std::vector<rewrite::call_result>> resolve_calls(request_context& ctx,
                                                             const std::vector<rewrite::blob_call>& calls,
                                                             page_in_state& paging);
  void record_page_in(request_context& ctx, const rewrite::page_result& r, std::uint64_t start_ns);
  // Streams: every hop's events go through the dialect's stream filter into
  // one client stream. Takes over after the first hop's response head.
  bool stream_interceptable(const request_context& ctx, const http::response_parser<http::empty_body>& head) const;
  awaitable<void> stream_with_page_in(request_context& ctx, upstream_pool& pool, upstream_reply first,
                                      telemetry::span& first_span, client_watch& watch, const std::string& first_body);
  awaitable<bool> write_chunk(request_context& ctx, std::string_view data, bool last);
  std::string filter_events(request_context& ctx, rewrite::stream_filter& filter, rewrite::sse::event_parser& events,
                            std::string_view piece, bool& passthrough);
  void finish_paging(request_context& ctx, const page_in_state& paging);
  awaitable<void> respond(request_context& ctx, upstream_connection& conn,
                          http::response_parser<http::empty_body>& head, telemetry::span& upstream_span,
                          bool& reusable);
  awaitable<void> respond_error(request_context& ctx, proxy_error e);
  void finish(request_context& ctx);
  void record_exchange(request_context& ctx, int status, const std::string& trace_hex, std::chrono::nanoseconds total);

  shard& shard_;
  services& svc_;
  beast::tcp_stream& client_;
};

}  // namespace gistproxy::proxy
