// The client side of one exchange, whatever carries it: an HTTP/1.x
// connection (proxy/sessions/http1_channel), an HTTP/2 stream
// (proxy/sessions/h2_stream), next a WebSocket. The exchange's phases and
// its writer (proxy/exchange/client_writer) hand it what to answer; the
// transport decides how that looks on its wire (status line, chunked coding
// and Connection on HTTP/1.x; HEADERS and DATA frames on HTTP/2). The phases
// see only this, so they run unchanged over any transport, and unit tests
// run them against a channel that records or fails on demand.
#pragma once

#include <optional>
#include <string_view>

#include "proxy/net/beast.hpp"
#include "proxy/net/client_watch.hpp"

namespace gistproxy::proxy {

class upstream_socket;
struct h2_pseudo_fields;

// A response's head as the exchange decides it, before any transport frames it.
struct reply_head {
  unsigned status = 200;
  std::string_view reason;       // HTTP/1.x's reason phrase; empty: the status's usual one
  const http::fields& fields;    // the end-to-end ones of these are sent (hop_by_hop.hpp)
  std::optional<std::uint64_t> length;  // the body's size, when known
  bool close = false;            // the exchange ends the connection after this response
};

class client_channel {
 public:
  virtual ~client_channel() = default;
  // A whole response: its head and all of its body (`body` empty: none, as
  // for a HEAD request's answer), in one write where the transport can.
  virtual awaitable<error_code> whole_response(const reply_head& head, std::string_view body) = 0;
  // A streamed response's head; its body follows through write_body.
  virtual awaitable<error_code> begin_response(const reply_head& head) = 0;
  // One piece of a streamed body; `last` ends it (an empty last piece only
  // ends it). Returns once the piece is written, or buffered within the
  // transport's bound (back-pressure). Also what a keep-alive event is
  // written with while the exchange waits on a later hop.
  virtual awaitable<error_code> write_body(std::string_view bytes, bool last) = 0;
  // Whether the connection may carry another request after this response,
  // as decided with its head (HTTP/1.x: the Connection it said).
  virtual bool keeps_connection() const = 0;
  // Starts `watch` noticing a client that leaves while the request is upstream.
  virtual void watch(client_watch& watch) = 0;
  virtual executor get_executor() = 0;
  // The upstream leg the transport holds for this client, when it holds one
  // (a WebSocket's upstream socket: every hop goes on it); nullptr: hops go
  // through the upstream pool.
  virtual upstream_socket* upstream_leg() { return nullptr; }
  // The client's protocol as the access log and request metric name it,
  // when the transport's requests do not say it (a WebSocket's messages are
  // synthetic HTTP/1.1 requests); empty: read it from the request.
  virtual std::string_view protocol_name() const { return {}; }
  // The request's HTTP/2 pseudo-fields as the client sent them; nullptr
  // when it came over another protocol.
  virtual const h2_pseudo_fields* pseudo_fields() const { return nullptr; }
};

}  // namespace gistproxy::proxy
