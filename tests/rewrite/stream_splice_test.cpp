// One hop of a Bedrock stream through the splice (rewrite/stream_splice.hpp),
// cut at every byte: events are filtered, frames no filter reads go on as
// sent and the stream is still followed, and from an exception, a framing
// error or a filter that throws on, every byte reaches the client in order,
// the frame the decoder held included.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewrite/endpoint.hpp"
#include "rewrite/eventstream/eventstream.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/stream_splice.hpp"

using namespace gistproxy::rewrite;

namespace {

std::string frame(const std::string& event_type, const std::string& payload, const std::string& message_type = "event") {
  return eventstream::encode(eventstream::make_message(
      {{":event-type", event_type}, {":content-type", "application/json"}, {":message-type", message_type}}, payload));
}

// As Bedrock pads its chunks ("p"): a re-encoded chunk differs from the sent one.
std::string chunk(const std::string& event_json) {
  return frame("chunk", R"({"bytes":")" + base64_encode(event_json) + R"(","p":"abcdefg"})");
}

std::string exception_frame() {
  return eventstream::encode(eventstream::make_message(
      {{":exception-type", "throttlingException"}, {":content-type", "application/json"}, {":message-type", "exception"}},
      R"({"message":"slow down"})"));
}

// What the splice sends for an event its filter passes on unchanged.
std::string reencoded(stream_transport t, const std::string& name, const std::string& data) {
  return make_stream_framing(t)->encode(sse_event(name, data));
}

// Passes every event on; throws on the one named `poison`.
struct passing_filter final : stream_filter {
  std::string poison;
  std::vector<std::string> seen;
  std::string on_event(const sse::event& e) override {
    seen.emplace_back(e.name);
    if (e.name == poison) throw std::runtime_error("unexpected shape");
    return std::string(e.raw);
  }
  hop_end end_hop() override { return {}; }
  std::string finish() override { return {}; }
  token_usage usage() const override { return {}; }
  std::string keepalive() const override { return {}; }
  std::string error_event(std::string_view, std::string_view) const override { return {}; }
};

// The client's bytes for `wire` cut once at `cut`, and whether the hop passed through.
std::string spliced(stream_transport t, stream_filter& f, const std::string& wire, std::size_t cut, bool& through) {
  hop_splice splice(t, f, 1u << 20);
  std::string out = splice.feed(std::string_view(wire).substr(0, cut));
  out += splice.feed(std::string_view(wire).substr(cut));
  through = splice.passing_through();
  return out;
}

const std::string start = R"({"type":"message_start","message":{"id":"m"}})";
const std::string delta = R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}})";
const std::string stop = R"({"type":"message_stop"})";

}  // namespace

TEST_CASE("stream splice: after an exception every byte goes on in order, the next frame's start included, at any cut") {
  const auto t = stream_transport::eventstream_wrapped;
  const std::string as_sent = exception_frame() + chunk(stop);
  const std::string wire = chunk(start) + chunk(delta) + as_sent;
  const std::string expected = reencoded(t, "message_start", start) + reencoded(t, "content_block_delta", delta) + as_sent;
  for (std::size_t cut = 0; cut <= wire.size(); ++cut) {
    CAPTURE(cut);
    passing_filter f;
    bool through = false;
    CHECK(spliced(t, f, wire, cut, through) == expected);
    CHECK(through);
    CHECK(f.seen == std::vector<std::string>{"message_start", "content_block_delta"});
  }
  // Converse's error messages likewise.
  const auto typed = stream_transport::eventstream_typed;
  const std::string error_rest = frame("modelStreamErrorException", R"({"message":"x"})", "error") +
                                 frame("messageStop", R"({"stopReason":"end_turn"})");
  const std::string typed_wire = frame("messageStart", R"({"role":"assistant"})") + error_rest;
  for (std::size_t cut = 0; cut <= typed_wire.size(); ++cut) {
    CAPTURE(cut);
    passing_filter f;
    bool through = false;
    CHECK(spliced(typed, f, typed_wire, cut, through) ==
          reencoded(typed, "messageStart", R"({"role":"assistant"})") + error_rest);
  }
}

TEST_CASE("stream splice: a frame no InvokeModel filter reads goes on as sent, and later events are still filtered") {
  const auto t = stream_transport::eventstream_wrapped;
  const std::string unknown = frame("futureEvent", R"({"anything":1})");
  const std::string typeless = chunk(R"({"no_type":true})");
  const std::string not_base64 = frame("chunk", R"({"bytes":"%%%"})");
  const std::string not_json = frame("chunk", R"({"bytes":")" + base64_encode("not json") + R"("})");
  const std::string odd = unknown + typeless + not_base64 + not_json;
  const std::string wire = chunk(start) + odd + chunk(delta) + chunk(stop);
  const std::string expected = reencoded(t, "message_start", start) + odd + reencoded(t, "content_block_delta", delta) +
                               reencoded(t, "message_stop", stop);
  for (std::size_t cut = 0; cut <= wire.size(); ++cut) {
    CAPTURE(cut);
    passing_filter f;
    bool through = true;
    CHECK(spliced(t, f, wire, cut, through) == expected);
    CHECK_FALSE(through);
    CHECK(f.seen == std::vector<std::string>{"message_start", "content_block_delta", "message_stop"});
  }
}

TEST_CASE("stream splice: from an event the filter throws on, or from garbage, the hop goes on as sent at any cut") {
  const auto t = stream_transport::eventstream_wrapped;
  SECTION("a filter that throws") {
    const std::string rest = chunk(delta) + frame("futureEvent", "{}") + chunk(stop);
    const std::string wire = chunk(start) + rest;
    for (std::size_t cut = 0; cut <= wire.size(); ++cut) {
      CAPTURE(cut);
      passing_filter f;
      f.poison = "content_block_delta";
      bool through = false;
      CHECK(spliced(t, f, wire, cut, through) == reencoded(t, "message_start", start) + rest);
      CHECK(through);
    }
  }
  SECTION("a framing error") {
    const std::string rest = std::string(40, '\x7f') + chunk(stop);
    const std::string wire = chunk(start) + rest;
    for (std::size_t cut = 0; cut <= wire.size(); ++cut) {
      CAPTURE(cut);
      passing_filter f;
      bool through = false;
      CHECK(spliced(t, f, wire, cut, through) == reencoded(t, "message_start", start) + rest);
      CHECK(through);
    }
  }
}

TEST_CASE("stream splice: InvokeModel's read_blob call after an unknown frame is still intercepted, fed byte by byte") {
  const auto* bedrock = endpoint_named("bedrock-messages");
  REQUIRE(bedrock);
  auto filter = bedrock->wire().make_stream_filter("read_blob");
  const std::string tool_start =
      R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"rb_0","name":"read_blob","input":{}}})";
  const std::string tool_input =
      R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"handle\":\"0123456789abcdef\"}"}})";
  const std::string wire = chunk(R"({"type":"message_start","message":{"id":"m","usage":{"input_tokens":3}}})") +
                           frame("futureEvent", R"({"x":1})") + chunk(R"({"no_type":true})") + chunk(tool_start) +
                           chunk(tool_input) + chunk(R"({"type":"content_block_stop","index":0})") +
                           chunk(R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}})") +
                           chunk(stop);
  hop_splice splice(bedrock->wire().answer_stream_transport(), *filter, 1u << 20);
  std::string out;
  for (char c : wire) out += splice.feed(std::string_view(&c, 1));
  CHECK_FALSE(splice.passing_through());
  CHECK(eventstream_as_sse(out, stream_transport::eventstream_wrapped).find("read_blob") == std::string::npos);
  CHECK(out.find(frame("futureEvent", R"({"x":1})")) != std::string::npos);
  const auto end = filter->end_hop();
  CHECK(end.complete);
  REQUIRE(end.calls.size() == 1);
}
