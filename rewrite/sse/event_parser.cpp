#include "rewrite/sse/event_parser.hpp"

#include <algorithm>
#include <cstring>

namespace gistproxy::rewrite::sse {

namespace {

// The first CR or LF at or after `from`, or npos: two memchr passes (vector
// instructions) instead of find_first_of, which tests each byte against the
// set one by one (it was most of a stream's parsing cost).
std::size_t first_line_end(std::string_view s, std::size_t from) {
  if (from >= s.size()) return std::string_view::npos;
  const char* begin = s.data() + from;
  const std::size_t length = s.size() - from;
  const auto* lf = static_cast<const char*>(std::memchr(begin, '\n', length));
  const std::size_t before_lf = lf ? static_cast<std::size_t>(lf - begin) : length;
  if (const auto* cr = static_cast<const char*>(std::memchr(begin, '\r', before_lf))) return from + (cr - begin);
  return lf ? from + before_lf : std::string_view::npos;
}

}  // namespace

void event_parser::feed(std::string_view bytes, const std::function<void(const event&)>& on_event) {
  if (consumed_ > 0 && consumed_ == buffer_.size()) {
    buffer_.clear();
    scan_ -= consumed_;
    searched_ = searched_ > consumed_ ? searched_ - consumed_ : 0;
    consumed_ = 0;
  }
  buffer_.append(bytes);
  for (;;) {
    // Resume the search where the last one gave up, not at the line's start:
    // a stream without newlines must cost linear time, not quadratic.
    const std::size_t from = std::max(scan_, searched_);
    std::size_t eol = first_line_end(buffer_, from);
    searched_bytes_ += (eol == std::string::npos ? buffer_.size() : eol + 1) - from;
    if (eol == std::string::npos) {
      searched_ = buffer_.size();
      break;
    }
    std::size_t next = eol + 1;
    if (buffer_[eol] == '\r') {
      if (next == buffer_.size()) {  // a '\n' may follow in the next chunk
        searched_ = eol;
        break;
      }
      if (buffer_[next] == '\n') ++next;
    }
    std::string_view line(buffer_.data() + scan_, eol - scan_);
    scan_ = next;
    if (line.empty()) {
      if (has_field_ || has_data_ || !name_.empty()) {
        event e;
        e.raw = std::string_view(buffer_).substr(consumed_, next - consumed_);
        e.name = name_;
        e.data = data_;
        e.comment_only = !has_data_ && name_.empty() && !has_field_;
        on_event(e);
      } else {
        // A blank line after comments only: surface it so keep-alives can be forwarded.
        event e;
        e.raw = std::string_view(buffer_).substr(consumed_, next - consumed_);
        e.comment_only = true;
        on_event(e);
      }
      consumed_ = next;
      name_.clear();
      data_.clear();
      has_data_ = has_field_ = false;
      continue;
    }
    if (line[0] == ':') continue;  // comment
    auto colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data_) data_ += '\n';
      data_.append(value);
      has_data_ = true;
    } else if (field == "event") {
      name_.assign(value);
    } else {
      has_field_ = true;  // id:, retry: or unknown fields
    }
  }
  // Drop fully consumed bytes once in a while so the buffer stays small.
  if (consumed_ > 65536 && consumed_ * 2 > buffer_.size()) {
    buffer_.erase(0, consumed_);
    scan_ -= consumed_;
    searched_ = searched_ > consumed_ ? searched_ - consumed_ : 0;
    consumed_ = 0;
  }
}

}  // namespace gistproxy::rewrite::sse
