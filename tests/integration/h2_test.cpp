// HTTP/2 cleartext with prior knowledge (h2c) on the proxy listener: curl's
// HTTP/2, many streams on one connection (one stalled by its window), and
// hostile clients (rapid reset, malformed frames). Each stream is one
// exchange through the same phases as an HTTP/1.1 request.
#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/h2_client.hpp"

using namespace gistproxy::testing;

namespace {

struct stack {
  mock_upstream upstream;
  std::filesystem::path spans = temp_path("h2-spans.jsonl");
  proxy_process proxy{{"--upstream", upstream.url(), "--span-log", spans.string()}};
};

struct curl_result {
  int exit_code = -1;
  std::string body, http_version;
};

// POSTs `body` with curl --http2-prior-knowledge; the body comes back in a file.
curl_result curl_h2(std::uint16_t port, const std::string& path, const std::string& body) {
  const auto in = temp_path("h2-request.json"), out = temp_path("h2-response");
  std::ofstream(in) << body;
  auto r = run_command({"curl", "-sS", "--http2-prior-knowledge", "-o", out.string(), "-w", "%{http_version}",
                        "-H", "Authorization: Bearer sk-test", "-H", "content-type: application/json",
                        "--data-binary", "@" + in.string(), "http://127.0.0.1:" + std::to_string(port) + path});
  curl_result c{r.exit_code, {}, r.output};
  std::ifstream f(out);
  c.body.assign(std::istreambuf_iterator<char>(f), {});
  return c;
}

}  // namespace

TEST_CASE("curl over h2c: a large tool output is offloaded and paged back in through read_blob") {
  stack s;
  auto res = curl_h2(s.proxy.port(), "/v1/chat/completions", request_for("chat", "find the needle", haystack()).dump());
  REQUIRE(res.exit_code == 0);
  CHECK(res.http_version == "2");
  auto j = nlohmann::json::parse(res.body, nullptr, false);
  REQUIRE(j.is_object());
  CHECK(answer_text("chat", j) == "found: 2501: config line 2500: NEEDLE secret_port=48213");
  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 2);                                                // one page-in hop
  CHECK(seen[0].find("NEEDLE secret_port=48213") == std::string::npos);    // offloaded
  CHECK(seen[1].find("NEEDLE secret_port=48213") != std::string::npos);    // paged back in
  auto metrics = metrics_with(s.proxy.admin_port(), {"gistproxy_h2_streams_total 1"});
  CHECK(metrics.find("gistproxy_h2_streams_total 1") != std::string::npos);
  CHECK(s.proxy.log().find(R"("protocol":"HTTP/2","path":"/v1/chat/completions")") != std::string::npos);
}

TEST_CASE("curl over h2c: a streamed chat completion with a page-in hop is spliced into one SSE stream") {
  stack s;
  auto req = request_for("chat", "find the needle", haystack());
  req["stream"] = true;
  auto res = curl_h2(s.proxy.port(), "/v1/chat/completions", req.dump());
  REQUIRE(res.exit_code == 0);
  CHECK(res.http_version == "2");
  CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(res.body.ends_with("data: [DONE]\n\n"));
  std::string text;
  for (const auto& data : sse_data(res.body)) {
    if (data == "[DONE]") continue;
    auto c = nlohmann::json::parse(data, nullptr, false);
    REQUIRE(c.is_object());
    if (c["choices"].empty()) continue;
    auto& delta = c["choices"][0]["delta"];
    if (delta.contains("content") && delta["content"].is_string()) text += delta["content"].get<std::string>();
  }
  CHECK(text == "found: 2501: config line 2500: NEEDLE secret_port=48213");
  CHECK(s.upstream.llm_bodies().size() == 2);
}

TEST_CASE("h2c: many streams on one connection complete while one stalled by a closed window waits") {
  stack s;
  h2_client c(s.proxy.port(), 0);  // every stream's window starts shut
  // The stalled stream's answer (300 KB) is more than the proxy buffers per
  // stream: its writer waits, and no other stream may.
  const auto stalled = c.submit("GET", "/sse?events=300&size=1000&delay_ms=0", "");
  std::vector<std::int32_t> others;
  const std::string chat = R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})";
  for (int i = 0; i < 40; ++i) {
    others.push_back(i % 2 ? c.submit("GET", "/bytes?n=100000", "")
                           : c.submit("POST", "/v1/chat/completions", chat, {{"authorization", "Bearer sk-test"}}));
  }
  c.send_queued();  // a window opens only on a stream that exists
  for (auto id : others) c.open_window(id, 1 << 20);
  c.open_window(0, 1 << 30);  // the connection's window: only streams limit here
  const bool all_others = c.pump_until([&] {
    for (auto id : others)
      if (!c.responses[id].closed) return false;
    return true;
  });
  REQUIRE(all_others);
  for (std::size_t i = 0; i < others.size(); ++i) {
    const auto& r = c.responses[others[i]];
    CHECK(r.status == 200);
    CHECK(r.error_code == 0);
    if (i % 2) CHECK(r.body.size() == 100000);
    else CHECK(nlohmann::json::parse(r.body, nullptr, false).is_object());
  }
  // A response whose last piece waited for the window and then went out is
  // a clean end, not a client that left.
  const std::string bytes_answers =
      R"(gistproxy_requests_total{api="other",status="200",group="treated",protocol="HTTP/2"} 20)";
  auto metrics = metrics_with(s.proxy.admin_port(), {bytes_answers});
  CHECK(metrics.find(bytes_answers) != std::string::npos);
  CHECK(metrics.find("client_disconnected") == std::string::npos);
  CHECK_FALSE(c.responses[stalled].closed);
  CHECK(c.responses[stalled].body.empty());  // its window is still shut
  c.open_window(stalled, 1 << 30);
  REQUIRE(c.pump_until([&] { return c.responses[stalled].closed; }));
  CHECK(c.responses[stalled].error_code == 0);
  CHECK(c.responses[stalled].body.size() > 300 * 1000);
  CHECK(c.responses[stalled].body.ends_with("\"}\n\n"));
}

TEST_CASE("h2c: a client that opens and resets streams in a loop gets GOAWAY ENHANCE_YOUR_CALM and is counted") {
  stack s;
  h2_client c(s.proxy.port());
  for (int i = 0; i < 400 && !c.ended; ++i) {
    auto id = c.submit("POST", "/v1/chat/completions", "", {{"authorization", "Bearer sk-test"}}, false);
    c.send_queued();  // else nghttp2 drops the unsent HEADERS instead of resetting the stream
    c.reset(id);
  }
  REQUIRE(c.pump_until([&] { return c.goaway.has_value(); }));
  CHECK(*c.goaway == 0xb);  // ENHANCE_YOUR_CALM
  auto metrics = metrics_with(s.proxy.admin_port(), {R"(gistproxy_h2_refusals_total{reason="rapid_reset"} 1)"});
  CHECK(metrics.find(R"(gistproxy_h2_refusals_total{reason="rapid_reset"} 1)") != std::string::npos);
  // The proxy still serves others.
  CHECK(http_request(s.proxy.port(), "GET", "/bytes?n=10").status == 200);
}

TEST_CASE("h2c: malformed frames close the connection and the proxy still serves") {
  stack s;
  h2_client c(s.proxy.port());
  REQUIRE(c.pump_until([&] { return c.ended; }, std::chrono::milliseconds(200)) == false);  // settings exchanged
  // A DATA frame on stream 0 (RFC 9113 §6.1: a connection error), then noise.
  c.send_raw(std::string("\x00\x00\x04\x00\x00\x00\x00\x00\x00" "abcd", 13) + std::string(64, '\xff'));
  REQUIRE(c.pump_until([&] { return c.ended; }));
  CHECK(c.goaway.has_value());
  auto metrics = metrics_with(s.proxy.admin_port(), {R"(gistproxy_h2_refusals_total{reason="protocol"} 1)"});
  CHECK(metrics.find(R"(gistproxy_h2_refusals_total{reason="protocol"} 1)") != std::string::npos);
  h2_client next(s.proxy.port());
  auto id = next.submit("GET", "/bytes?n=10", "");
  REQUIRE(next.pump_until([&] { return next.responses[id].closed; }));
  CHECK(next.responses[id].status == 200);
  CHECK(http_request(s.proxy.port(), "GET", "/bytes?n=10").status == 200);
}

TEST_CASE("h2c: a request body over --max-body is answered 413 on its stream alone") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--max-body", "1000"}};
  h2_client c(proxy.port());
  auto big = c.submit("POST", "/v1/chat/completions", std::string(5000, 'x'), {{"authorization", "Bearer sk-test"}});
  auto small = c.submit("GET", "/bytes?n=10", "");
  REQUIRE(c.pump_until([&] { return c.responses[big].closed && c.responses[small].closed; }));
  CHECK(c.responses[big].status == 413);
  CHECK(c.responses[small].status == 200);
}

TEST_CASE("h2c: a stream reset while a page-in hop runs cancels that hop and the connection serves on") {
  stack s;
  h2_client c(s.proxy.port());
  auto req = request_for("messages", "hang second hop", haystack());
  req["stream"] = true;
  auto id = c.submit("POST", "/v1/messages", req.dump(), {{"x-api-key", "sk-test"}, {"content-type", "application/json"}});
  // The first hop's events reach the client, then the second hop hangs upstream.
  REQUIRE(c.pump_until([&] { return c.responses[id].body.find("message_start") != std::string::npos; }));
  REQUIRE(c.pump_until([&] { return s.upstream.llm_bodies().size() == 2; }));
  c.reset(id);
  c.send_queued();
  for (int i = 0; i < 300 && s.upstream.hangs_cancelled() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(s.upstream.hangs_cancelled() == 1);  // the second hop's upstream request was closed
  auto metrics = metrics_with(s.proxy.admin_port(), {"type=\"client_disconnected\",group=\"treated\"} 1"});
  CHECK(metrics.find(R"(gistproxy_errors_total{source="downstream",type="client_disconnected",group="treated"} 1)") !=
        std::string::npos);
  auto next = c.submit("GET", "/bytes?n=10", "");
  REQUIRE(c.pump_until([&] { return c.responses[next].closed; }));
  CHECK(c.responses[next].status == 200);
}

TEST_CASE("h2c: a header list over the limit is a 431 on its stream alone and a CONTINUATION flood ends the connection") {
  stack s;
  SECTION("a small header block that decodes to 300 KB (one indexed field, repeated)") {
    h2_client c(s.proxy.port());
    std::vector<std::pair<std::string, std::string>> fields(100, {"x-big", std::string(3000, 'a')});
    auto big = c.submit("GET", "/bytes?n=10", "", fields);
    auto small = c.submit("GET", "/bytes?n=10", "");
    REQUIRE(c.pump_until([&] { return c.responses[big].closed && c.responses[small].closed; }));
    CHECK(c.responses[big].status == 431);  // answered on its stream, never forwarded
    CHECK(c.responses[small].status == 200);
    auto metrics = metrics_with(s.proxy.admin_port(), {R"(gistproxy_h2_refusals_total{reason="header_list"} 1)"});
    CHECK(metrics.find(R"(gistproxy_h2_refusals_total{reason="header_list"} 1)") != std::string::npos);
  }
  SECTION("a header block spread over more CONTINUATION frames than allowed") {
    h2_client c(s.proxy.port());
    c.send_queued();  // the preface and SETTINGS
    // Written by hand: nghttp2's client will not send such a block. Each
    // CONTINUATION carries one small literal field ("x: a").
    auto frame = [](std::uint8_t type, std::uint8_t flags, std::string payload) {
      const auto n = payload.size();
      return std::string{char(n >> 16), char(n >> 8), char(n), char(type), char(flags), 0, 0, 0, 1} + payload;
    };
    const std::string field("\x00\x01x\x01a", 5);
    std::string flood = frame(0x1, 0, field);  // HEADERS on stream 1, no END_HEADERS
    for (int i = 0; i < 20; ++i) flood += frame(0x9, i == 19 ? 0x4 : 0, field);
    c.send_raw(flood);
    REQUIRE(c.pump_until([&] { return c.ended; }));
    auto metrics = metrics_with(s.proxy.admin_port(), {R"(gistproxy_h2_refusals_total{reason="flood"} 1)"});
    CHECK(metrics.find(R"(gistproxy_h2_refusals_total{reason="flood"} 1)") != std::string::npos);
    CHECK(http_request(s.proxy.port(), "GET", "/bytes?n=10").status == 200);
  }
}

TEST_CASE("h2c: while a streamed page-in hop waits, keep-alive events flow on the stream and are counted") {
  mock_upstream upstream;
  proxy_process proxy{{"--upstream", upstream.url(), "--stream-keepalive", "300ms"}};
  h2_client c(proxy.port());
  auto req = request_for("messages", "slow second hop", haystack());
  req["stream"] = true;
  auto id = c.submit("POST", "/v1/messages", req.dump(), {{"x-api-key", "sk-test"}, {"content-type", "application/json"}});
  REQUIRE(c.pump_until([&] { return c.responses[id].closed; }));
  const auto& r = c.responses[id];
  CHECK(r.error_code == 0);
  CHECK(r.body.find("event: ping") != std::string::npos);  // 1.5 s of silence upstream, a ping every 300 ms
  CHECK(r.body.find("found: ") != std::string::npos);
  CHECK(r.body.find("read_blob") == std::string::npos);
  const std::string bytes_series = R"(gistproxy_response_bytes_total{api="messages",group="treated"})";
  auto metrics = metrics_with(proxy.admin_port(), {bytes_series + " " + std::to_string(r.body.size())});
  CHECK(series_value(metrics, bytes_series) == double(r.body.size()));
}

TEST_CASE("h2c: a drain sends GOAWAY, lets the streams in flight finish, refuses new ones and the process exits") {
  mock_upstream upstream;
  // A drain time far above the test's wait for the exit: an exit in time is
  // the drain finishing, not its deadline.
  proxy_process proxy{{"--upstream", upstream.url(), "--drain-timeout", "120s"}};
  h2_client c(proxy.port(), 0);  // windows shut: the answers wait in the proxy until the test opens them
  const auto bytes = c.submit("GET", "/bytes?n=100000", "");
  const auto events = c.submit("GET", "/sse?events=20&size=100&delay_ms=0", "");
  c.send_queued();
  c.open_window(0, 1 << 30);
  REQUIRE(c.pump_until([&] { return upstream.requests_served() == 2; }));  // both in flight
  REQUIRE(::kill(proxy.pid(), SIGTERM) == 0);
  REQUIRE(c.pump_until([&] { return c.goaway.has_value(); }));
  CHECK(*c.goaway == 0);                       // NO_ERROR: a graceful end
  CHECK(c.goaway_last_stream == events);       // both streams taken, none after them
  CHECK_FALSE(c.responses[bytes].closed);
  CHECK_FALSE(c.responses[events].closed);
  // A client that opens a stream anyway (written by hand: nghttp2's client
  // will not after a GOAWAY) is not served: GET / never reaches the upstream.
  const std::string get_root("\x82\x86\x84", 3);  // :method GET, :scheme http, :path / (HPACK static table)
  c.send_raw(std::string{0, 0, 3, 0x1, 0x5, 0, 0, 0, char(events + 2)} + get_root);
  c.open_window(bytes, 1 << 20);
  c.open_window(events, 1 << 20);
  REQUIRE(c.pump_until([&] { return c.responses[bytes].closed && c.responses[events].closed; }));
  CHECK(c.responses[bytes].error_code == 0);
  CHECK(c.responses[bytes].body.size() == 100000);
  CHECK(c.responses[events].error_code == 0);
  CHECK(c.responses[events].body.find("\"i\":19") != std::string::npos);
  REQUIRE(c.pump_until([&] { return c.ended; }));  // the proxy closes the connection once they are done
  CHECK(upstream.requests_served() == 2);
  CHECK(proxy.stop() == 0);  // exited by itself (stop waits 10 s, the drain could take 120)
}
