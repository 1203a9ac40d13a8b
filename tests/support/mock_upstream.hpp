// A scripted LLM-API stand-in for tests and benchmarks, on loopback, plain
// HTTP or TLS. Routes (any method, query ignored unless noted):
//   /echo                   JSON: method, target, headers, body size and SHA-256
//   …/chat/completions      a chat completion; SSE when the body has "stream":true
//   …/responses, …/messages a canned Responses / Anthropic Messages JSON answer
//                           (Responses: ids resp_1, resp_2, ... and the API's
//                           stored state enforced and served: GET and DELETE
//                           /v1/responses/{id}[/input_items], see responses_state.hpp)
//                           (LLM answers are compressed when Accept-Encoding
//                           allows, as the real APIs' front ends do; streams
//                           chunked and flushed line by line)
//   /sse?events=N&delay_ms=D&size=B   N SSE events, D ms apart
//   /slow?ms=D              waits D ms before answering
//   /drop                   chunked response that stops mid-body (connection closed)
//   /drop-length            Content-Length 1000, sends 10 bytes, closes
//   /hang                   never answers; counts connections the proxy cancelled
//   /bytes?n=N              N bytes of payload with Content-Length
//   POST /v1/traces         an OTLP collector: stores the body, answers {}
//                           (?fail=N: the first N posts get 503)
//   GET …/responses, Upgrade: websocket
//                           the Responses API's WebSocket mode (mock_upstream_ws.hpp)
//   anything else           404 JSON
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gistproxy::testing {

class ws_responses;

// A fault the Responses WebSocket route plays for the next `times` upgrades
// (refuse_upgrade) or generating response.create messages (the others).
struct ws_fault {
  enum class kind {
    none,
    refuse_upgrade,  // answer the upgrade with `status` (426: the client falls back to HTTP)
    close,           // a close frame with `close_code` after `after_events` events
    drop,            // the TCP connection ends (no close frame) after `after_events` events
    non_json_text,   // a text frame that is not JSON after `after_events` events, then the rest
    binary_frame,    // a binary frame after `after_events` events, then the rest
    stall,           // `after_events` events, then nothing (the response stays in flight)
    oversized_event, // a 1 MiB JSON event after `after_events` events, then the rest
  };
  kind what = kind::none;
  int status = 426;
  int after_events = 0;
  int close_code = 1011;
  int times = 1;
};

// What the WebSocket route saw: each upgrade request, each client frame.
struct ws_upgrade_seen {
  std::string target;
  std::map<std::string, std::string> headers;  // lowercase names
  int status = 101;                            // or the refusal's
};
struct ws_frame_seen {
  int connection = 0;  // 1 for the first upgrade accepted, 2 for the next, ...
  bool text = true;
  std::string payload;
};

struct mock_upstream_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string tls_cert_file;  // PEM; TLS when set
  std::string tls_key_file;
  unsigned threads = 1;
  // As the real APIs do: LLM answers (JSON and SSE) are compressed in the
  // coding the request's Accept-Encoding prefers (br, zstd, gzip, deflate).
  bool compress = true;
  // The largest request head it reads (Beast's default, as a front end's
  // would refuse); tests of the proxy's own header limits raise it.
  std::uint32_t header_limit = 8 * 1024;
};

class mock_upstream {
 public:
  explicit mock_upstream(mock_upstream_options options = {});
  ~mock_upstream();
  std::uint16_t port() const;
  std::string url() const;  // http(s)://127.0.0.1:PORT

  // Counters for assertions.
  std::uint64_t connections_accepted() const;
  std::uint64_t requests_served() const;
  std::uint64_t hangs_cancelled() const;  // /hang connections the peer closed
  std::uint64_t hangs_open() const;       // /hang requests waiting now
  std::uint64_t hangs_peak() const;       // the most /hang requests that ever waited at once
  std::vector<std::string> otlp_posts() const;  // bodies received on /v1/traces
  // Request bodies the LLM routes (chat/completions, responses, messages) received, in order.
  std::vector<std::string> llm_bodies() const;
  // The headers of those requests (lowercase names), in the same order.
  std::vector<std::map<std::string, std::string>> llm_headers() const;
  void fail_next_otlp_posts(int n);

  // The Responses WebSocket route (mock_upstream_ws.hpp).
  void set_ws_fault(ws_fault fault);
  void set_ws_handshake_headers(std::map<std::string, std::string> headers);  // added to the 101
  std::vector<ws_upgrade_seen> ws_upgrades() const;
  std::vector<ws_frame_seen> ws_frames() const;  // every client frame, in order

 private:
  struct impl;
  std::shared_ptr<ws_responses> ws_;  // first: outlives impl_'s coroutines
  std::unique_ptr<impl> impl_;
};

}  // namespace gistproxy::testing
