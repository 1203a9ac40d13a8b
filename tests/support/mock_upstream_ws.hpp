// The mock upstream's Responses API over WebSocket, as OpenAI's "WebSocket
// mode" and Codex CLI 0.171 speak it (notes: /work/notes/50-ws-protocol.md):
//   - `GET …/responses` with `Upgrade: websocket` is answered 101 (no
//     permessage-deflate: the extension is declined by leaving it out);
//   - each client text frame {"type":"response.create", …the HTTP create
//     body…} gets one response, streamed as one text frame per event (the
//     SSE `data:` JSON only, sequence_number from 0), ending with
//     response.completed; `generate:false` (a warm-up) gets response.created
//     and response.completed with no output;
//   - the answer is the scripted model's (scripted_model.hpp), rendered as the
//     HTTP route renders it, so every script works the same;
//   - previous_response_id names a response of this connection (or one the
//     HTTP route stored); the connection keeps every answer whatever `store`
//     said, as the real API caches the connection's state in memory;
//   - errors are {"type":"error","status":N,"error":{…}} events, the socket
//     stays open; one response at a time (a second response.create while
//     one streams is an error event); pings are answered; a binary frame
//     from the client is closed with 1003;
//   - faults (ws_fault) and the records tests assert on (ws_upgrade_seen,
//     ws_frame_seen) are set and read through mock_upstream.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/mock_upstream.hpp"
#include "tests/support/responses_state.hpp"

namespace gistproxy::testing {

class ws_responses {
 public:
  using request = boost::beast::http::request<boost::beast::http::string_body>;
  // `stored`: the HTTP route's kept responses, which previous_response_id may name.
  explicit ws_responses(responses_state& stored) : stored_(stored) {}

  // Whether `req` asks to upgrade a Responses path to a WebSocket.
  static bool wants(const request& req);
  // Answers the upgrade (101 or a scripted refusal) and serves the socket
  // until it closes. Returns false: the connection is done with HTTP.
  // Instantiated for tcp::socket and beast::ssl_stream<tcp::socket>.
  template <class Stream>
  boost::asio::awaitable<bool> serve(Stream& stream, request req);

  void set_fault(ws_fault fault);
  void set_handshake_headers(std::map<std::string, std::string> headers);
  std::vector<ws_upgrade_seen> upgrades() const;
  std::vector<ws_frame_seen> frames() const;

  // For the connection's own code (mock_upstream_ws.cpp).
  responses_state& stored() { return stored_; }
  // The fault for the next response (or upgrade, `upgrade`), counted down; kind none when there is none.
  ws_fault take_fault(bool upgrade);
  void record(ws_frame_seen frame);

 private:
  responses_state& stored_;
  mutable std::mutex mutex_;
  ws_fault fault_;
  std::map<std::string, std::string> handshake_headers_;
  std::vector<ws_upgrade_seen> upgrades_;
  std::vector<ws_frame_seen> frames_;
  int connections_ = 0;
};

}  // namespace gistproxy::testing
