#include "rewrite/endpoint.hpp"
#include "rewrite/usage/usage_observer.hpp"

#include <catch2/catch.hpp>

#include "rewrite/stream_filter.hpp"
#include "rewrite/stream_framing.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("usage is found in a streamed Anthropic response") {
  usage_observer o(&endpoint_for("POST", "/v1/messages")->wire(), usage_observer::body_kind::sse);
  std::string stream =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":15}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  for (std::size_t i = 0; i < stream.size(); i += 13) o.on_body(std::string_view(stream).substr(i, 13));
  auto u = o.finish();
  CHECK(u.input_tokens == 25);
  CHECK(u.output_tokens == 15);
}

TEST_CASE("usage is found in the include_usage chunk of a chat stream") {
  usage_observer o(&endpoint_for("POST", "/v1/chat/completions")->wire(), usage_observer::body_kind::sse);
  o.on_body("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":null}\n\n");
  o.on_body("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n");
  auto u = o.finish();
  CHECK(u.input_tokens == 4);
  CHECK(u.output_tokens == 2);
}

TEST_CASE("usage is found on response.completed of a responses stream") {
  usage_observer o(&endpoint_for("POST", "/v1/responses")->wire(), usage_observer::body_kind::sse);
  o.on_body("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":8,\"output_tokens\":3}}}\n\n");
  CHECK(o.finish().input_tokens == 8);
}

TEST_CASE("compressed or non-JSON bodies are not inspected") {
  CHECK(usage_observer::classify("application/json", "gzip") == usage_observer::body_kind::other);
  CHECK(usage_observer::classify("text/event-stream; charset=utf-8", "") == usage_observer::body_kind::sse);
  CHECK(usage_observer::classify("application/json", "") == usage_observer::body_kind::json);
  CHECK(usage_observer::classify("text/html", "") == usage_observer::body_kind::other);
}

TEST_CASE("usage is found in a relayed Bedrock event-stream, InvokeModel's chunks and Converse's metadata alike") {
  CHECK(usage_observer::classify("application/vnd.amazon.eventstream", "") == usage_observer::body_kind::eventstream);
  auto framed = [](stream_transport t, std::string_view sse_text) { return make_stream_framing(t)->encode(sse_text); };
  usage_observer invoke(&endpoint_for("POST", "/model/anthropic.claude-x-v1%3A0/invoke-with-response-stream")->wire(),
                        usage_observer::body_kind::eventstream);
  const auto wire = framed(stream_transport::eventstream_wrapped,
                           sse_event("message_start", R"({"type":"message_start","message":{"usage":{"input_tokens":25,"output_tokens":1}}})") +
                               sse_event("message_delta", R"({"type":"message_delta","usage":{"output_tokens":15}})"));
  for (std::size_t i = 0; i < wire.size(); i += 7) invoke.on_body(std::string_view(wire).substr(i, 7));
  auto u = invoke.finish();
  CHECK(u.input_tokens == 25);
  CHECK(u.output_tokens == 15);

  usage_observer converse(&endpoint_for("POST", "/model/m/converse-stream")->wire(), usage_observer::body_kind::eventstream);
  converse.on_body(framed(stream_transport::eventstream_typed,
                          sse_event("metadata", R"({"usage":{"inputTokens":9,"outputTokens":4},"metrics":{"latencyMs":5}})")));
  CHECK(converse.finish().output_tokens == 4);

  // An API whose streams are SSE does not read an event-stream, and garbage is no usage.
  usage_observer chat(&endpoint_for("POST", "/v1/chat/completions")->wire(), usage_observer::body_kind::eventstream);
  chat.on_body(wire);
  CHECK_FALSE(chat.finish().known());
  usage_observer junk(&endpoint_for("POST", "/model/m/invoke-with-response-stream")->wire(), usage_observer::body_kind::eventstream);
  junk.on_body(std::string(100, '\xff'));
  junk.on_body(wire);
  CHECK_FALSE(junk.finish().known());
}
