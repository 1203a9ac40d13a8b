#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

TEST_CASE("SSE events reach the client as they are produced, before the upstream finishes") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  // 5 events 300 ms apart: the stream takes ~1.2 s upstream.
  auto res = http_stream(proxy.port(), "GET", "/sse?events=5&delay_ms=300");
  REQUIRE(res.error.empty());
  REQUIRE(res.pieces.size() >= 2);
  double first = res.pieces.front().at_ms, last = res.pieces.back().at_ms;
  CHECK(last >= 1100);
  CHECK(first < last - 800);  // the first event did not wait for the rest
  std::string all;
  for (auto& p : res.pieces) all += p.bytes;
  auto direct = http_stream(upstream.port(), "GET", "/sse?events=5&delay_ms=0");
  std::string expected;
  for (auto& p : direct.pieces) expected += p.bytes;
  CHECK(all == expected);
}

TEST_CASE("a close-delimited SSE chat stream is re-framed for the client, byte-identical") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  std::string body = R"({"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[]})";
  auto direct = http_request(upstream.port(), "POST", "/v1/chat/completions", body);
  auto proxied = http_request(proxy.port(), "POST", "/v1/chat/completions", body);
  REQUIRE(proxied.ok());
  CHECK(proxied.headers["content-type"] == "text/event-stream");
  CHECK(proxied.headers["transfer-encoding"] == "chunked");
  CHECK(proxied.body == direct.body);
  CHECK(proxied.body.ends_with("data: [DONE]\n\n"));
}
