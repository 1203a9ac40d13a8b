// Watches a response body go by (JSON or SSE) and reports the token usage the
// provider put in it, without holding more than it must: SSE is parsed event
// by event; a JSON body is kept only up to a cap.
#pragma once

#include <string>
#include <string_view>

#include "rewrite/dialect.hpp"
#include "rewrite/sse/event_parser.hpp"

namespace gistproxy::rewrite {

class usage_observer {
 public:
  enum class body_kind { json, sse, eventstream, other };  // eventstream: AWS application/vnd.amazon.eventstream
  usage_observer(const dialect* d, body_kind kind) : dialect_(d), kind_(kind) {}

  static body_kind classify(std::string_view content_type, std::string_view content_encoding);

  void on_body(std::string_view bytes);
  // The whole body at once (no copy is kept); then finish() as usual.
  void on_whole_body(std::string_view bytes);
  // Call once the body is complete; returns what was found.
  token_usage finish();

 private:
  static constexpr std::size_t max_json_bytes = 8u << 20;
  const dialect* dialect_;
  body_kind kind_;
  std::string json_;
  bool json_overflow_ = false;
  bool sse_overflow_ = false;
  sse::event_parser sse_;
  token_usage usage_;
};

}  // namespace gistproxy::rewrite
