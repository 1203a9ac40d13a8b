// HTTP/2 upstream work never outlives its stream: whoever resets a stream
// (the client, nghttp2 provoked by the client — MadeYouReset, CVE-2025-8671
// — or a reset read with its HEADERS), its upstream hop is cancelled, and
// the upstream requests in flight from one connection never exceed the
// advertised SETTINGS_MAX_CONCURRENT_STREAMS. Frames are written by hand
// (tests/support/raw_h2.hpp); the mock upstream's /hang never answers and
// counts what waits on it.
#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"
#include "tests/support/h2_client.hpp"
#include "tests/support/raw_h2.hpp"

using namespace gistproxy::testing;

namespace {

constexpr std::uint32_t refused_stream = 0x7, enhance_your_calm = 0xb;

struct stack {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url()}};
};

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

}  // namespace

TEST_CASE("h2: MadeYouReset, resets in the HEADERS read and rapid reset together never exceed 100 upstream requests") {
  stack s;
  raw_h2 c(s.proxy.port());
  REQUIRE(c.read_until([&] { return c.max_concurrent_streams.has_value(); }));
  CHECK(*c.max_concurrent_streams == 100);
  std::int32_t id = 1;
  for (int round = 0; round < 64 && !c.ended && !c.goaway; ++round) {
    std::string burst;
    for (int i = 0; i < 10; ++i, id += 2) {
      burst += raw_h2::get(id, "/hang");
      switch (i % 3) {
        case 0: burst += raw_h2::window_update(id, 0x7fffffff); break;  // nghttp2 resets it: FLOW_CONTROL_ERROR
        case 1: burst += raw_h2::reset(id); break;                        // reset in the same read as its HEADERS
        default: break;                                                   // reset by the client a moment later
      }
    }
    c.send(burst);
    c.read_until([] { return false; }, std::chrono::milliseconds(2));
    std::string later;
    for (std::int32_t back = id - 2; back > id - 20; back -= 2)
      if ((back - 1) / 2 % 10 % 3 == 2) later += raw_h2::reset(back);
    c.send(later);
    CHECK(s.upstream.hangs_peak() <= 100);
  }
  REQUIRE(c.read_until([&] { return c.goaway.has_value(); }));
  CHECK(*c.goaway == enhance_your_calm);  // the resets of both sides, past the limit
  CHECK(s.upstream.hangs_peak() <= 100);  // was: 640 in flight from one connection
  CHECK(wait_for([&] { return s.upstream.hangs_open() == 0; }));  // every hop cancelled, none left waiting
  const std::string series = R"(gistproxy_h2_refusals_total{reason="rapid_reset"})";
  CHECK(series_value(metrics_with(s.proxy.admin_port(), {series + " 1"}), series) == 1);
  CHECK(http_request(s.proxy.port(), "GET", "/bytes?n=10").status == 200);
}

TEST_CASE("h2: a stream reset in the same read as its HEADERS never starts its upstream request") {
  stack s;
  raw_h2 c(s.proxy.port());
  std::string burst;
  for (std::int32_t id = 1; id < 40; id += 2) burst += raw_h2::get(id, "/hang") + raw_h2::reset(id);
  burst += raw_h2::get(41, "/bytes?n=10");  // a barrier: read after all of them
  c.send(burst);
  REQUIRE(c.read_until([&] { return c.answered.count(41) == 1; }));
  // Streams are started in the read that completes them: the barrier's
  // answer means every earlier stream was started or dropped.
  const std::string started = "gistproxy_h2_streams_total";
  CHECK(series_value(metrics_with(s.proxy.admin_port(), {started + " 1"}), started) == 1);  // was: 21
  CHECK(s.upstream.hangs_peak() == 0);
}

TEST_CASE("h2: streams past the advertised limit are refused with REFUSED_STREAM and the ones in flight go on") {
  stack s;
  raw_h2 c(s.proxy.port());
  std::string burst;
  for (std::int32_t id = 1; id <= 209; id += 2) burst += raw_h2::get(id, "/hang");  // 105 streams
  c.send(burst);
  REQUIRE(c.read_until([&] { return c.resets.size() == 5; }));
  for (const auto& [stream, code] : c.resets) {
    CHECK(stream > 199);
    CHECK(code == refused_stream);
  }
  CHECK(wait_for([&] { return s.upstream.hangs_open() == 100; }));
  CHECK_FALSE(c.goaway);  // was: GOAWAY, the 100 in flight lost
  const std::string series = R"(gistproxy_h2_refusals_total{reason="stream_limit"})";
  CHECK(series_value(metrics_with(s.proxy.admin_port(), {series + " 5"}), series) == 5);
}

TEST_CASE("h2: bodies arriving on one connection are bounded by 4 x --max-body: the fifth is refused") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--max-body", "1000"}};
  raw_h2 c(proxy.port());
  std::string uploads;
  for (std::int32_t id = 1; id <= 7; id += 2)
    uploads += raw_h2::post_head(id, "/echo") + raw_h2::data(id, std::string(1000, 'b'), false);
  uploads += raw_h2::post_head(9, "/echo") + raw_h2::data(9, "b", false);  // 4,001 bytes arriving
  c.send(uploads);
  REQUIRE(c.read_until([&] { return c.resets.count(9) == 1; }));
  CHECK(c.resets[9] == refused_stream);  // was: a budget of 256 MiB whatever --max-body said
  CHECK(c.resets.size() == 1);
  std::string ends;
  for (std::int32_t id = 1; id <= 7; id += 2) ends += raw_h2::data(id, "", true);
  c.send(ends);
  REQUIRE(c.read_until([&] { return c.answered.size() == 4; }));
}

TEST_CASE("h2: a request body that stops arriving is answered 408 while another stream keeps streaming") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--client-timeout", "1s"}};
  h2_client c(proxy.port());
  const auto streaming = c.submit("GET", "/sse?events=60&size=10&delay_ms=100", "");  // six seconds of events
  const auto stalled = c.submit("POST", "/echo", "", {}, false);                      // a body announced, never sent
  REQUIRE(c.pump_until([&] { return c.responses[stalled].closed; }));
  CHECK(c.responses[stalled].status == 408);  // was: only when the client next sent something
  CHECK_FALSE(c.responses[streaming].closed);
  REQUIRE(c.pump_until([&] { return c.responses[streaming].closed; }));
  CHECK(c.responses[streaming].status == 200);
}
