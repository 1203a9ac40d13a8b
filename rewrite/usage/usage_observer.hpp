// Watches a response body go by (JSON, SSE or Bedrock's event-stream) and
// reports the token usage the provider put in it, without holding more than
// it must: streams are parsed event by event; a JSON body is kept only up to a cap.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "rewrite/wire_format.hpp"
#include "rewrite/sse/event_parser.hpp"

namespace gistproxy::rewrite {

class stream_framing;

class usage_observer {
 public:
  enum class body_kind { json, sse, eventstream, other };  // eventstream: AWS application/vnd.amazon.eventstream
  usage_observer(const wire_format* d, body_kind kind);
  ~usage_observer();
  usage_observer(const usage_observer&) = delete;
  usage_observer& operator=(const usage_observer&) = delete;

  static body_kind classify(std::string_view content_type, std::string_view content_encoding);

  void on_body(std::string_view bytes);
  // The whole body at once (no copy is kept); then finish() as usual.
  void on_whole_body(std::string_view bytes);
  // Call once the body is complete; returns what was found.
  token_usage finish();

 private:
  static constexpr std::size_t max_json_bytes = 8u << 20;
  const wire_format* wire_;
  body_kind kind_;
  std::string json_;
  bool json_overflow_ = false;
  bool sse_overflow_ = false;
  sse::event_parser sse_;
  std::unique_ptr<stream_framing> frames_;  // an event-stream's messages as events (null once it cannot be followed)
  token_usage usage_;
};

}  // namespace gistproxy::rewrite
