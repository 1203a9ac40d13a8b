// How a stream's events are framed on the wire. Stream filters speak SSE
// events; a framing turns an upstream's wire bytes into those events and a
// filter's output (SSE text) back into wire bytes, so one filter per API
// serves every transport its answers come in: SSE as sent, or Bedrock's
// binary AWS event-stream, decoded, filtered and re-encoded with fresh CRCs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "rewrite/wire_format.hpp"
#include "rewrite/sse/event_parser.hpp"

namespace gistproxy::rewrite {

class stream_filter;

class stream_framing {
 public:
  virtual ~stream_framing() = default;
  // Feeds wire bytes; each complete event goes to on_event as SSE (its `raw`
  // the SSE text a filter passes on unchanged), with its wire bytes (what a
  // stream that gave up filtering sends as they came). A message that is no
  // event a filter reads (an unknown AWS :event-type, a chunk whose JSON has
  // no "type") comes with a null event: the caller sends its wire bytes as
  // they came and keeps following the stream. False when the bytes cannot be
  // followed (a framing error, or an AWS exception, which ends the turn): the
  // caller then passes pending() and every later byte through as sent.
  using event_handler = std::function<void(const sse::event* e, std::string_view wire)>;
  virtual bool feed(std::string_view bytes, const event_handler& on_event) = 0;
  // Wire bytes received but not yet part of an event the filter saw.
  virtual std::string_view pending() const = 0;
  // A filter's output as wire bytes (SSE comments, which only keep a
  // connection alive, have no equivalent in binary framings: dropped).
  virtual std::string encode(std::string_view sse_text) = 0;
  // The stream's last message when it fails after it started.
  virtual std::string error(const stream_filter& filter, std::string_view type, std::string_view message) = 0;
};

std::unique_ptr<stream_framing> make_stream_framing(stream_transport transport);

// An AWS event-stream answer's messages, each as the SSE event a filter of
// `transport` reads ("event: NAME\ndata: JSON"): what assemble_stream and the
// usage observer read; messages that are not events are left out.
std::string eventstream_as_sse(std::string_view wire, stream_transport transport);

}  // namespace gistproxy::rewrite
