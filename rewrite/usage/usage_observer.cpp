#include "rewrite/usage/usage_observer.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/stream_framing.hpp"

namespace gistproxy::rewrite {

usage_observer::usage_observer(const wire_format* d, body_kind kind) : wire_(d), kind_(kind) {
  // Only a wire format whose streams are event-stream can read one.
  if (d && kind == body_kind::eventstream && d->answer_stream_transport() != stream_transport::sse)
    frames_ = make_stream_framing(d->answer_stream_transport());
}

usage_observer::~usage_observer() = default;

usage_observer::body_kind usage_observer::classify(std::string_view content_type, std::string_view content_encoding) {
  if (!content_encoding.empty() && content_encoding != "identity") return body_kind::other;
  if (content_type.rfind("text/event-stream", 0) == 0) return body_kind::sse;
  if (content_type.rfind("application/vnd.amazon.eventstream", 0) == 0) return body_kind::eventstream;
  if (content_type.find("json") != std::string_view::npos) return body_kind::json;
  return body_kind::other;
}

void usage_observer::on_body(std::string_view bytes) {
  if (!wire_) return;
  if (kind_ == body_kind::sse) {
    if (sse_overflow_) return;
    sse_.feed(bytes, [&](const sse::event& e) {
      if (!e.comment_only) wire_->usage_from_event(e.name, e.data, usage_);
    });
    // An event larger than any API sends: stop observing (usage unknown)
    // rather than buffer the stream.
    if (sse_.pending().size() > max_json_bytes) sse_overflow_ = true, sse_ = {};
  } else if (kind_ == body_kind::eventstream && frames_) {
    const bool followed = frames_->feed(bytes, [&](const sse::event* e, std::string_view) {
      if (e) wire_->usage_from_event(e->name, e->data, usage_);
    });
    if (!followed) frames_.reset();  // an exception or a framing error: usage as far as it went
  } else if (kind_ == body_kind::json && !json_overflow_) {
    if (json_.size() + bytes.size() > max_json_bytes) {
      json_overflow_ = true;
      json_.clear();
    } else {
      json_.append(bytes);
    }
  }
}

void usage_observer::on_whole_body(std::string_view bytes) {
  if (wire_ && kind_ == body_kind::json) {
    usage_ = wire_->usage_from_response(bytes);
    kind_ = body_kind::other;  // done: finish() must not parse again
    return;
  }
  on_body(bytes);
}

token_usage usage_observer::finish() {
  if (wire_ && kind_ == body_kind::json && !json_overflow_ && !json_.empty()) {
    usage_ = wire_->usage_from_response(std::string_view(json_));
  }
  return usage_;
}

}  // namespace gistproxy::rewrite
