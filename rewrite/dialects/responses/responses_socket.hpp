// The Responses API's WebSocket mode mapped onto the HTTP forms the proxy's
// phases already speak (notes/50-ws-protocol.md). A client's `response.create`
// message becomes an HTTP Responses request body; that body, or a page-in
// hop's, becomes the upstream's `response.create` message; each upstream
// event message becomes the SSE event the stream reader parses; the SSE the
// exchange writes becomes one client message per event; an answer that is
// not a stream becomes an `error` event. Members are copied byte for byte,
// never re-serialised: prompt caches key on exact bytes.
//
// Every frame read here comes from the other side: bounded by a maximum
// size, walked by the position-preserving scanner (no recursion, no tree).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "rewrite/sse/event_parser.hpp"

namespace gistproxy::rewrite {

// What a client's text frame asks for.
enum class client_frame_kind {
  create,   // response.create: `request_body` is the HTTP request to run
  other,    // another type (response.cancel, response.processed…): forward as is
  refused,  // not a message we can read: answer an `error` event (400), keep the socket
};

struct client_frame {
  client_frame_kind kind = client_frame_kind::refused;
  // create: the frame's members but `type`, in their order, with `stream`
  // forced to true (a socket's answer is always a stream of events).
  std::string request_body;
  // refused: why, in a few words (never the frame's bytes).
  std::string_view refusal;
};

// Reads a client's text frame of at most max_bytes. Refused: over the bound,
// not UTF-8 (RFC 6455 text), not one well-formed JSON object (nested deeper
// than the scanner's 512 levels included), no string `type`, or two members
// that both spell `type` (which one a server honours is not ours to guess).
client_frame read_client_frame(std::string_view frame, std::size_t max_bytes);

// The upstream message for an HTTP Responses request body (the client's, or a
// page-in hop's): {"type":"response.create", ...the body's members...}. A
// `type` member of the body is dropped (the message has one type); `stream`
// is kept as is: Codex sends "stream":true in its socket messages, so the
// server accepts it. nullopt when the body is not a JSON object (the phases
// never make one: an internal error).
std::optional<std::string> response_create_frame(std::string_view request_body);

// An upstream event message as the SSE event the stream reader parses.
struct upstream_event {
  // `event: <type>` (left out when the type holds a control character, which
  // could not stay on its line) and the frame as `data:` lines: one per line
  // of the frame, so the parser joins them back into the frame (exactly,
  // unless the frame holds a CR, which comes back as LF: JSON whitespace).
  std::string sse;
  // response.completed, response.failed, response.incomplete or error: the
  // last event of one response.
  bool ends_response = false;
};

// nullopt when the frame is over max_bytes, not UTF-8, not one JSON object or
// has no string `type`: an upstream protocol error for the session.
std::optional<upstream_event> sse_of_upstream_frame(std::string_view frame, std::size_t max_bytes);

// The SSE the exchange writes to the client, cut into the client's text
// frames: one per event that carries data, the data as is. Comments
// (keep-alives), events without data and `[DONE]` make none.
class sse_to_client_frames {
 public:
  // An event (its bytes still arriving) may hold at most max_event_bytes.
  explicit sse_to_client_frames(std::size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

  // Calls on_frame for each frame the bytes complete (the view is valid
  // during the call only). Once an event outgrew the bound, nothing more is
  // read: overflowed() says so and the session ends the response in error.
  void feed(std::string_view sse_bytes, const std::function<void(std::string_view frame)>& on_frame);
  bool overflowed() const { return overflowed_; }

 private:
  sse::event_parser parser_;
  std::size_t max_event_bytes_;
  bool overflowed_ = false;
};

// An answer that is not a stream (an error status, or an upstream that
// ignored "stream":true), as the `error` event a socket client reads:
// {"type":"error","status":N,"error":<the body's error object, byte for byte>}
// when the body (at most max_bytes) is a JSON object whose `error` is an
// object (OpenAI's shape and gistproxy's own), else an `upstream_error` with
// a fixed message: a body may hold anything, none of it is copied.
std::string error_event_frame(int status, std::string_view body, std::size_t max_bytes);

}  // namespace gistproxy::rewrite
