// Bedrock's streams as SSE events for the stream filters, and back. An
// InvokeModel stream wraps each Anthropic event as base64 in a "chunk"
// message ({"bytes": …}); a Converse stream names each event by its
// :event-type header and carries its JSON as the payload. A message that is
// no event a filter reads (an unknown :event-type, a chunk without a "type")
// is handed on as sent and the stream is still followed, as an SSE stream's
// unknown events are. Exceptions (:message-type exception or error) end the
// turn: from one on, the stream passes through as sent.
#include <nlohmann/json.hpp>

#include "rewrite/eventstream/eventstream.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/stream_framing.hpp"

namespace gistproxy::rewrite {
namespace {

struct named_event {
  std::string name, data;
};

bool is_exception(const eventstream::message& m) {
  const auto type = m.string_header(":message-type");
  return type == std::optional<std::string_view>("exception") || type == std::optional<std::string_view>("error");
}

// The event a message carries; nullopt for anything else.
std::optional<named_event> event_of(const eventstream::message& m, stream_transport transport) {
  if (m.string_header(":message-type") != std::optional<std::string_view>("event")) return std::nullopt;
  auto type = m.string_header(":event-type");
  if (!type) return std::nullopt;
  if (transport == stream_transport::eventstream_typed) return named_event{std::string(*type), m.payload};
  if (*type != "chunk") return std::nullopt;
  const auto wrapper = json::parse_checked(m.payload);
  const auto& bytes = checked::member(wrapper, "bytes");
  if (!bytes.is_string()) return std::nullopt;
  named_event e;
  if (!base64_decode(bytes.get_ref<const std::string&>(), e.data)) return std::nullopt;
  e.name = checked::string_at(json::parse_checked(e.data), "type");
  if (e.name.empty()) return std::nullopt;
  return e;
}

std::string event_message(stream_transport transport, std::string_view name, std::string_view data) {
  if (transport == stream_transport::eventstream_typed)
    return eventstream::encode(eventstream::make_message(
        {{":event-type", std::string(name)}, {":content-type", "application/json"}, {":message-type", "event"}},
        std::string(data)));
  std::string payload = R"({"bytes":")" + base64_encode(data) + R"("})";
  return eventstream::encode(eventstream::make_message(
      {{":event-type", "chunk"}, {":content-type", "application/json"}, {":message-type", "event"}}, std::move(payload)));
}

class eventstream_framing final : public stream_framing {
 public:
  explicit eventstream_framing(stream_transport transport) : transport_(transport) {}

  bool feed(std::string_view bytes, const event_handler& on_event) override {
    if (failed_) {
      leftover_.append(bytes);
      return false;
    }
    const bool framed = decoder_.feed(bytes, [&](eventstream::message&& m, std::string_view raw) {
      if (!failed_ && is_exception(m)) failed_ = true;  // the turn ends in it: the rest goes as sent
      if (failed_) return leftover_.append(raw), void();
      auto named = event_of(m, transport_);
      if (!named) return on_event(nullptr, raw);  // no event a filter reads: on as sent
      current_ = std::move(*named);
      // The event as SSE: what a filter passing it on unchanged returns.
      current_sse_ = sse_event(current_.name, current_.data);
      sse::event e;
      e.raw = current_sse_;
      e.name = current_.name;
      e.data = current_.data;
      on_event(&e, raw);
    });
    if (!framed) failed_ = true;
    // Every byte the decoder holds waits too, in order: the start of the next
    // message (or, after a framing error, the undecodable rest). The decoder
    // is not fed again, so they are nowhere else.
    if (failed_) leftover_.append(decoder_.pending());
    return !failed_;
  }

  std::string_view pending() const override { return failed_ ? std::string_view(leftover_) : decoder_.pending(); }

  std::string encode(std::string_view sse_text) override {
    std::string out;
    sse::event_parser events;
    events.feed(sse_text, [&](const sse::event& e) {
      if (!e.comment_only) out += event_message(transport_, e.name, e.data);
    });
    return out;
  }

  std::string error(const stream_filter&, std::string_view type, std::string_view message) override {
    nlohmann::json payload{{"message", std::string(message)}, {"type", std::string(type)}};
    return eventstream::encode(eventstream::make_message(
        {{":exception-type", "internalServerException"}, {":content-type", "application/json"},
         {":message-type", "exception"}},
        payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  }

 private:
  stream_transport transport_;
  eventstream::decoder decoder_;
  named_event current_;   // the event being handed out (views into it)
  std::string current_sse_;
  bool failed_ = false;
  std::string leftover_;  // wire bytes from the first exception or framing error on
};

}  // namespace

std::unique_ptr<stream_framing> make_eventstream_framing(stream_transport transport) {
  return std::make_unique<eventstream_framing>(transport);
}

std::string eventstream_as_sse(std::string_view wire, stream_transport transport) {
  std::string out;
  eventstream::decoder decoder;
  decoder.feed(wire, [&](eventstream::message&& m, std::string_view) {
    if (auto e = event_of(m, transport)) out += sse_event(e->name, e->data);
  });
  return out;
}

}  // namespace gistproxy::rewrite
