#include <signal.h>

#include <catch2/catch.hpp>
#include <future>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

std::string error_type(const http_result& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  return j.is_object() ? j["error"].value("type", "") : "";
}

// A GET through the proxy, and how long it took.
std::pair<http_result, std::chrono::steady_clock::duration> timed_get(std::uint16_t port, const std::string& target) {
  const auto start = std::chrono::steady_clock::now();
  auto res = http_request(port, "GET", target);
  return {std::move(res), std::chrono::steady_clock::now() - start};
}

}  // namespace

TEST_CASE("an unreachable upstream gives a clear 502") {
  std::uint16_t dead_port;
  {
    mock_upstream gone;  // take a free port, then free it
    dead_port = gone.port();
  }
  proxy_process proxy({"--upstream", "http://127.0.0.1:" + std::to_string(dead_port)});
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", "{}");
  REQUIRE(res.ok());
  CHECK(res.status == 502);
  CHECK(error_type(res) == "upstream_unreachable");
  CHECK(res.headers["x-gistproxy-error"] == "upstream_unreachable");
}

TEST_CASE("a slow upstream gives 504 after the upstream timeout") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--upstream-timeout", "300ms"});
  auto [res, elapsed] = timed_get(proxy.port(), "/slow?ms=3000");
  REQUIRE(res.ok());
  CHECK(res.status == 504);
  CHECK(error_type(res) == "upstream_timeout");
  CHECK(elapsed < std::chrono::milliseconds(2500));
}

TEST_CASE("an upstream silent mid-response is cut at --stream-idle-timeout: the client's response ends abnormally") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--stream-idle-timeout", "300ms"});
  auto [res, elapsed] = timed_get(proxy.port(), "/sse?events=3&delay_ms=5000");
  CHECK(res.status == 200);
  CHECK_FALSE(res.ok());  // never a clean end that looks complete
  CHECK(elapsed < std::chrono::milliseconds(4000));
  auto metrics = metrics_with(proxy.admin_port(), {"type=\"upstream_timeout\",group=\"treated\"} 1"});
  CHECK(metrics.find("type=\"upstream_timeout\",group=\"treated\"} 1") != std::string::npos);
}

TEST_CASE("client deadlines bound reading a request and idling between requests, never the wait for the upstream") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--client-timeout", "300ms", "--idle-timeout", "300ms"});
  SECTION("an upstream slower than both client deadlines still answers") {
    http_connection conn(proxy.port());
    auto res = conn.request("GET", "/slow?ms=900");
    REQUIRE(res.ok());
    CHECK(res.status == 200);
    auto again = conn.request("GET", "/slow?ms=10");  // the connection is still good
    CHECK(again.status == 200);
  }
  SECTION("a connection that sends nothing is closed at the idle deadline") {
    auto start = std::chrono::steady_clock::now();
    auto answer = raw_exchange(proxy.port(), "", std::chrono::seconds(5));
    auto elapsed = std::chrono::steady_clock::now() - start;
    CHECK(answer.empty());
    CHECK(elapsed < std::chrono::milliseconds(2500));
  }
}

TEST_CASE("a body over the limit gives 413, and malformed HTTP gives 400") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--max-body", "1KiB"});
  SECTION("declared length over the limit") {
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", std::string(4096, 'x'));
    REQUIRE(res.ok());
    CHECK(res.status == 413);
    CHECK(error_type(res) == "body_too_large");
  }
  SECTION("chunked body growing over the limit") {
    std::string chunk(800, 'y');
    char size[16];
    std::snprintf(size, sizeof size, "%zx", chunk.size());
    auto raw = raw_exchange(proxy.port(), "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                              std::string(size) + "\r\n" + chunk + "\r\n" + size + "\r\n" + chunk + "\r\n0\r\n\r\n");
    CHECK(raw.rfind("HTTP/1.1 413", 0) == 0);
  }
  SECTION("garbage request line") {
    auto raw = raw_exchange(proxy.port(), "THIS IS NOT HTTP\r\n\r\n");
    CHECK(raw.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(raw.find("bad_request") != std::string::npos);
  }
  CHECK(upstream.requests_served() == 0);
}

TEST_CASE("an upstream that drops mid-response makes the client's response end abnormally") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  SECTION("chunked stream") {
    auto res = http_request(proxy.port(), "GET", "/drop");
    CHECK_FALSE(res.ok());  // never a clean end that looks complete
    CHECK(res.status == 200);
  }
  SECTION("short Content-Length on a small body: nothing was sent yet, so a clean 502") {
    auto res = http_request(proxy.port(), "GET", "/drop-length");
    REQUIRE(res.ok());
    CHECK(res.status == 502);
    CHECK(error_type(res) == "upstream_reset");
  }
}

TEST_CASE("a client that disconnects cancels its upstream request") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  raw_exchange(proxy.port(), "GET /hang HTTP/1.1\r\nHost: x\r\n\r\n", std::chrono::milliseconds(300));
  for (int i = 0; i < 200 && upstream.hangs_cancelled() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(upstream.hangs_cancelled() == 1);
}

TEST_CASE("SIGTERM drains in-flight requests, then exits cleanly") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto in_flight = std::async(std::launch::async, [&] { return http_request(proxy.port(), "GET", "/slow?ms=1500"); });
  // SIGTERM once the upstream holds the request: in flight for sure.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (upstream.requests_served() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(upstream.requests_served() == 1);
  int status = proxy.stop(SIGTERM);
  auto res = in_flight.get();
  REQUIRE(res.ok());
  CHECK(res.status == 200);
  CHECK(status == 0);
  CHECK(proxy.log().find("\"msg\":\"draining\"") != std::string::npos);
}
