#include "rewrite/stream_framing.hpp"

#include "rewrite/stream_filter.hpp"

namespace gistproxy::rewrite {
namespace {

// Server-sent events: the wire is the filter's language.
class sse_framing final : public stream_framing {
 public:
  bool feed(std::string_view bytes, const event_handler& on_event) override {
    events_.feed(bytes, [&](const sse::event& e) { on_event(&e, e.raw); });
    return true;
  }
  std::string_view pending() const override { return events_.pending(); }
  std::string encode(std::string_view sse_text) override { return std::string(sse_text); }
  std::string error(const stream_filter& filter, std::string_view type, std::string_view message) override {
    return filter.error_event(type, message);
  }

 private:
  sse::event_parser events_;
};

}  // namespace

std::unique_ptr<stream_framing> make_eventstream_framing(stream_transport transport);  // eventstream_framing.cpp

std::unique_ptr<stream_framing> make_stream_framing(stream_transport transport) {
  if (transport == stream_transport::sse) return std::make_unique<sse_framing>();
  return make_eventstream_framing(transport);
}

}  // namespace gistproxy::rewrite
