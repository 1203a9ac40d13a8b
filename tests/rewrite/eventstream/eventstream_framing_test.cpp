// Bedrock's event-stream as the stream filters' SSE events, and back
// (rewrite/stream_framing.hpp): what the stream reader relies on to splice
// page-in hops into one coherent event stream.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rewrite/eventstream/eventstream.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/stream_filter.hpp"
#include "rewrite/stream_framing.hpp"

using namespace gistproxy::rewrite;

namespace {

std::string chunk(const std::string& event_json) {
  return eventstream::encode(eventstream::make_message(
      {{":event-type", "chunk"}, {":content-type", "application/json"}, {":message-type", "event"}},
      R"({"bytes":")" + base64_encode(event_json) + R"(","p":"abc"})"));
}

std::string typed(const std::string& name, const std::string& payload) {
  return eventstream::encode(eventstream::make_message(
      {{":event-type", name}, {":content-type", "application/json"}, {":message-type", "event"}}, payload));
}

std::string exception_message() {
  return eventstream::encode(eventstream::make_message(
      {{":exception-type", "throttlingException"}, {":content-type", "application/json"}, {":message-type", "exception"}},
      R"({"message":"slow down"})"));
}

struct got {
  std::string name, data, raw, wire;
};

// Feeds `wire` one byte at a time (the worst split), collecting events.
std::vector<got> feed_bytewise(stream_framing& f, const std::string& wire, bool& framed) {
  std::vector<got> out;
  framed = true;
  for (char c : wire)
    framed = f.feed(std::string_view(&c, 1), [&](const sse::event* e, std::string_view w) {
      REQUIRE(e);
      out.push_back({std::string(e->name), std::string(e->data), std::string(e->raw), std::string(w)});
    }) && framed;
  return out;
}

}  // namespace

TEST_CASE("event-stream framing: InvokeModel chunks become the Anthropic events they wrap, split anywhere") {
  const std::string start = R"({"type":"message_start","message":{"id":"m"}})";
  const std::string delta = R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}})";
  auto framing = make_stream_framing(stream_transport::eventstream_wrapped);
  bool framed = false;
  const auto events = feed_bytewise(*framing, chunk(start) + chunk(delta), framed);
  CHECK(framed);
  REQUIRE(events.size() == 2);
  CHECK(events[0].name == "message_start");
  CHECK(events[0].data == start);
  CHECK(events[0].raw == sse_event("message_start", start));  // what a filter passing it on returns
  CHECK(events[0].wire == chunk(start));                      // what a stream that gave up filtering sends
  CHECK(events[1].name == "content_block_delta");
  CHECK(framing->pending().empty());
}

TEST_CASE("event-stream framing: a filter's output is encoded as valid messages, keep-alive comments dropped") {
  auto framing = make_stream_framing(stream_transport::eventstream_wrapped);
  const std::string data = R"({"type":"ping"})";
  const auto wire = framing->encode(": keep-alive\n\n" + sse_event("ping", data));
  eventstream::decoder d;
  std::vector<eventstream::message> messages;
  REQUIRE(d.feed(wire, [&](eventstream::message&& m, std::string_view) { messages.push_back(std::move(m)); }));
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].string_header(":event-type") == std::optional<std::string_view>("chunk"));
  std::string decoded;
  REQUIRE(base64_decode(nlohmann::json::parse(messages[0].payload)["bytes"].get<std::string>(), decoded));
  CHECK(decoded == data);
  CHECK(framing->encode(": keep-alive\n\n").empty());

  auto converse = make_stream_framing(stream_transport::eventstream_typed);
  CHECK(converse->encode(sse_event("messageStop", R"({"stopReason":"end_turn"})")) ==
        typed("messageStop", R"({"stopReason":"end_turn"})"));
}

TEST_CASE("event-stream framing: from an exception on, the stream is not followed and its bytes wait as sent") {
  auto framing = make_stream_framing(stream_transport::eventstream_typed);
  const auto first = typed("messageStart", R"({"role":"assistant"})");
  const auto rest = exception_message() + typed("messageStop", "{}");
  std::vector<std::string> names;
  auto named = [&](const sse::event* e, std::string_view) { names.emplace_back(e ? e->name : "(as sent)"); };
  CHECK(framing->feed(first, named));
  CHECK_FALSE(framing->feed(rest, named));
  CHECK(names == std::vector<std::string>{"messageStart"});
  CHECK(framing->pending() == rest);  // passed through as they came, nothing lost
  // Garbage is no event stream either: nothing is delivered, nothing is lost.
  auto garbage = make_stream_framing(stream_transport::eventstream_wrapped);
  const std::string junk(64, '\x7f');
  CHECK_FALSE(garbage->feed(junk, [&](const sse::event*, std::string_view) { FAIL("no event in garbage"); }));
  CHECK(garbage->pending() == junk);
}

TEST_CASE("event-stream framing: the next message's start, held when an exception arrives, waits as sent too") {
  auto framing = make_stream_framing(stream_transport::eventstream_wrapped);
  const auto next = chunk(R"({"type":"message_stop"})");
  const auto first = exception_message() + next.substr(0, 20);
  CHECK_FALSE(framing->feed(first, [&](const sse::event*, std::string_view) { FAIL("an exception is no event"); }));
  CHECK(framing->pending() == first);
  CHECK_FALSE(framing->feed(next.substr(20), [&](const sse::event*, std::string_view) { FAIL("not followed"); }));
  CHECK(framing->pending() == exception_message() + next);
}

TEST_CASE("event-stream framing: a message no filter reads comes as sent, and the events after it still come") {
  auto framing = make_stream_framing(stream_transport::eventstream_wrapped);
  const auto unknown = typed("futureEvent", "{}");
  const auto typeless = chunk(R"({"no_type":true})");
  const auto stop = chunk(R"({"type":"message_stop"})");
  std::vector<std::string> seen;
  CHECK(framing->feed(unknown + typeless + stop, [&](const sse::event* e, std::string_view wire) {
    seen.push_back(e ? std::string(e->name) : "as sent: " + std::string(wire));
  }));
  CHECK(seen == std::vector<std::string>{"as sent: " + unknown, "as sent: " + typeless, "message_stop"});
  CHECK(framing->pending().empty());
}

TEST_CASE("event-stream framing: a failure after the stream started is an exception message, and replay reads events only") {
  auto framing = make_stream_framing(stream_transport::eventstream_wrapped);
  struct no_filter final : stream_filter {
    std::string on_event(const sse::event&) override { return {}; }
    hop_end end_hop() override { return {}; }
    std::string finish() override { return {}; }
    token_usage usage() const override { return {}; }
    std::string keepalive() const override { return {}; }
    std::string error_event(std::string_view, std::string_view) const override { return "event: error\ndata: {}\n\n"; }
  } filter;
  const auto wire = framing->error(filter, "api_error", "gistproxy: upstream answered HTTP 500");
  eventstream::decoder d;
  std::vector<eventstream::message> messages;
  REQUIRE(d.feed(wire, [&](eventstream::message&& m, std::string_view) { messages.push_back(std::move(m)); }));
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].string_header(":message-type") == std::optional<std::string_view>("exception"));
  CHECK(messages[0].string_header(":exception-type") == std::optional<std::string_view>("internalServerException"));
  CHECK(nlohmann::json::parse(messages[0].payload)["message"] == "gistproxy: upstream answered HTTP 500");

  const std::string start = R"({"type":"message_start"})";
  CHECK(eventstream_as_sse(chunk(start) + exception_message(), stream_transport::eventstream_wrapped) ==
        sse_event("message_start", start));
}
