#include "rewrite/usage/usage_observer.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::rewrite;

TEST_CASE("usage is found in a streamed Anthropic response") {
  usage_observer o(dialect_for("POST", "/v1/messages"), usage_observer::body_kind::sse);
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
  usage_observer o(dialect_for("POST", "/v1/chat/completions"), usage_observer::body_kind::sse);
  o.on_body("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":null}\n\n");
  o.on_body("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n");
  auto u = o.finish();
  CHECK(u.input_tokens == 4);
  CHECK(u.output_tokens == 2);
}

TEST_CASE("usage is found on response.completed of a responses stream") {
  usage_observer o(dialect_for("POST", "/v1/responses"), usage_observer::body_kind::sse);
  o.on_body("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":8,\"output_tokens\":3}}}\n\n");
  CHECK(o.finish().input_tokens == 8);
}

TEST_CASE("compressed or non-JSON bodies are not inspected") {
  CHECK(usage_observer::classify("application/json", "gzip") == usage_observer::body_kind::other);
  CHECK(usage_observer::classify("text/event-stream; charset=utf-8", "") == usage_observer::body_kind::sse);
  CHECK(usage_observer::classify("application/json", "") == usage_observer::body_kind::json);
  CHECK(usage_observer::classify("text/html", "") == usage_observer::body_kind::other);
}
