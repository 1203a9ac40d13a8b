// Splicing page-in hops into one client stream. A stream filter sees every
// SSE event of every upstream hop and decides what the client gets: events
// pass through as they arrive (indices renumbered across hops), except the
// read_blob calls' own events, the client's tool calls of a turn (held until
// the turn is known not to end in read_blob, so they reach the client once)
// and the end-of-turn events, which are withheld until the final hop and then
// sent once, with usage summed over all hops.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewrite/wire_format.hpp"
#include "rewrite/sse/event_parser.hpp"

namespace gistproxy::rewrite {

class stream_filter {
 public:
  virtual ~stream_filter() = default;
  // The bytes the client gets for one upstream event (often the event as is, possibly nothing).
  virtual std::string on_event(const sse::event& e) = 0;

  struct hop_end {
    std::vector<blob_call> calls;  // read_blob calls of this hop's turn
    nlohmann::json response;       // the turn as that API's JSON response (for continue_conversation)
    bool complete = false;         // the upstream ended the turn properly
  };
  // The upstream finished this hop's stream.
  virtual hop_end end_hop() = 0;
  // After the final hop: the withheld client tool calls and end-of-turn events.
  virtual std::string finish() = 0;
  // Token usage over every hop so far, as the client is told it.
  virtual token_usage usage() const = 0;
  // Something to send while later hops run, so idle timeouts do not fire.
  virtual std::string keepalive() const = 0;
  // That API's error event, for a failure after the stream started.
  virtual std::string error_event(std::string_view type, std::string_view message) const = 0;

  // The request members the API echoes (wire_format::echoed_members), to give
  // back in every event that carries the response object.
  void echo(nlohmann::json members) { echoed_ = std::move(members); }

 protected:
  nlohmann::json echoed_ = nlohmann::json::object();
};

// Each API's filter lives in its folder (rewrite/dialects/NAME/
// NAME_stream.cpp); its wire format's make_stream_filter returns it.

// One named SSE event: "event: NAME\ndata: DATA\n\n".
std::string sse_event(std::string_view name, const std::string& data);

}  // namespace gistproxy::rewrite
