// Incremental Server-Sent Events parser (WHATWG event-stream rules): bytes in,
// whole events out, each with its exact raw text so a caller can forward,
// withhold or rewrite it event by event.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite::sse {

struct event {
  std::string_view raw;    // the event's bytes including its terminating blank line
  std::string_view name;   // "event:" field; empty means "message"
  std::string_view data;   // "data:" lines joined with '\n'
  bool comment_only = false;  // only ":" comment lines (keep-alives)
};

class event_parser {
 public:
  // Calls on_event for each complete event in the bytes fed so far. Views in
  // the event are valid only during the call.
  void feed(std::string_view bytes, const std::function<void(const event&)>& on_event);
  // Bytes received but not yet part of a complete event.
  std::string_view pending() const { return std::string_view(buffer_).substr(consumed_); }
  // Bytes examined while looking for line ends, over the parser's life: at
  // most about twice the bytes fed, however the stream is split (linear).
  std::size_t searched_bytes() const { return searched_bytes_; }

 private:
  std::string buffer_;
  std::size_t consumed_ = 0;  // start of the first incomplete event
  std::size_t scan_ = 0;      // start of the line being scanned
  std::size_t searched_ = 0;  // bytes before this hold no line end past scan_
  std::size_t searched_bytes_ = 0;
  // Fields of the event being assembled (offsets are rebuilt per event).
  std::string name_, data_;
  bool has_data_ = false, has_field_ = false;
};

}  // namespace gistproxy::rewrite::sse
