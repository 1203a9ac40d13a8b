// Out of file descriptors the proxy fails open, never hangs: a new client is
// answered 503 (Retry-After: 1) at once on the listener's reserve descriptor
// instead of waiting in the backlog until its own timeout; a request that
// needs an upstream connection it cannot open is answered 503 naming the
// cause; an offload whose blob cannot be written goes upstream as sent; and
// once descriptors are back, everything is served as before. The running
// proxy's limit is lowered with prlimit(2) (tests/support/descriptors.hpp).
#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>
#include <thread>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/descriptors.hpp"

using namespace gistproxy::testing;

namespace {

using std::chrono::seconds;
using clock_type = std::chrono::steady_clock;

// Slow machines and sanitizer builds answer late, never not at all: each
// wait is bounded, and generous.
constexpr auto patience = seconds(20);

// Log lines holding every one of `parts`.
std::size_t log_lines(const std::string& log, const std::vector<std::string>& parts) {
  std::size_t n = 0;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    bool all = true;
    for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
    n += all;
  }
  return n;
}

// The proxy's log once it holds a line with every one of `parts` (its
// output is collected as it comes: a line written before an answer may be
// read after it), or at the deadline.
std::string log_with(const proxy_process& proxy, const std::vector<std::string>& parts) {
  const auto deadline = clock_type::now() + patience;
  auto log = proxy.log();
  while (log_lines(log, parts) == 0 && clock_type::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    log = proxy.log();
  }
  return log;
}

// New clients until one gets `status` (or the deadline): what the proxy
// answers once the limit it was just given has taken effect.
http_result poll_until_status(std::uint16_t port, const std::string& target, int status) {
  const auto deadline = clock_type::now() + patience;
  http_result r;
  do {
    r = http_request(port, "GET", target, {}, {}, seconds(5));
    if (r.status == status) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (clock_type::now() < deadline);
  return r;
}

// Waits until the proxy holds `count` descriptors (it accepted a connection).
bool wait_for_descriptors(int pid, std::size_t count) {
  const auto deadline = clock_type::now() + patience;
  while (open_descriptors(pid) < count && clock_type::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return open_descriptors(pid) >= count;
}

std::string header(const http_result& r, const std::string& name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? std::string() : it->second;
}

bool is_out_of_descriptors_answer(const http_result& r) {
  if (r.status != 503 || header(r, "retry-after") != "1") return false;
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  return j.is_object() && j["error"]["type"] == "out_of_descriptors" && j["error"]["retryable"] == true;
}

}  // namespace

TEST_CASE("out of descriptors a new client is answered 503 with Retry-After at once and served again once the limit is raised") {
  SKIP_DESCRIPTOR_STARVATION_UNDER_SANITIZERS();
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  started_descriptors(proxy);
  REQUIRE(leave_descriptors(proxy.pid(), 0));

  const auto shed = poll_until_status(proxy.port(), "/echo", 503);
  REQUIRE(shed.status == 503);  // before: no answer at all, the client timed out in the backlog
  CHECK(is_out_of_descriptors_answer(shed));
  CHECK(header(shed, "connection") == "close");
  CHECK(header(shed, "x-gistproxy-error") == "out_of_descriptors");
  // Every new client is told, each at once; the admin listener too.
  for (int i = 0; i < 3; ++i) CHECK(is_out_of_descriptors_answer(http_request(proxy.port(), "GET", "/echo", {}, {}, seconds(5))));
  CHECK(is_out_of_descriptors_answer(poll_until_status(proxy.admin_port(), "/healthz", 503)));
  const auto served_while_out = upstream.requests_served();

  REQUIRE(raise_descriptor_limit(proxy.pid()));
  CHECK(poll_until_status(proxy.port(), "/echo", 200).status == 200);
  CHECK(http_request(proxy.admin_port(), "GET", "/healthz").status == 200);
  CHECK(upstream.requests_served() > served_while_out);
  const auto metrics = http_request(proxy.admin_port(), "GET", "/metrics").body;
  CHECK(series_value(metrics, "gistproxy_accept_shed_total{listener=\"proxy\"}") >= 4);
  CHECK(series_value(metrics, "gistproxy_accept_shed_total{listener=\"admin\"}") >= 1);
  CHECK(series_value(metrics, "gistproxy_accept_paused_total{reason=\"descriptors\"}") >= 5);
  // Said once per run of failures, not once per client. The admin
  // listener's run came last: once its line is in, so are the earlier ones.
  const auto log = log_with(proxy, {"out of file descriptors: accept failed", "\"listener\":\"admin\""});
  CHECK(log_lines(log, {"out of file descriptors: accept failed", "\"listener\":\"proxy\""}) == 1);
  CHECK(log_lines(log, {"out of file descriptors: accept failed", "\"listener\":\"admin\""}) == 1);
}

TEST_CASE("out of descriptors a HEAD is answered 503 with the header alone, on the admin listener and the proxy's") {
  SKIP_DESCRIPTOR_STARVATION_UNDER_SANITIZERS();
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  started_descriptors(proxy);
  REQUIRE(leave_descriptors(proxy.pid(), 0));
  for (const auto port : {proxy.admin_port(), proxy.port()}) {
    INFO((port == proxy.port() ? "proxy" : "admin") << " listener");
    REQUIRE(is_out_of_descriptors_answer(poll_until_status(port, "/healthz", 503)));  // its reserve answers now
    // Everything the listener sends, until it closes: a HEAD answer's body
    // would be read as the answer to the client's next request.
    const auto raw = raw_exchange(port, "HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", seconds(5));
    REQUIRE(raw.rfind("HTTP/1.1 503 ", 0) == 0);
    const auto end = raw.find("\r\n\r\n");
    REQUIRE(end != std::string::npos);
    CHECK(raw.size() == end + 4);  // was: the JSON error body followed
    CHECK(raw.find("Content-Length: ") < end);  // the GET answer's length, announced
    CHECK(raw.find("Content-Length: 0\r") == std::string::npos);
  }
  REQUIRE(raise_descriptor_limit(proxy.pid()));
}

TEST_CASE("out of descriptors a request needing a new upstream connection is answered 503 naming the cause") {
  SKIP_DESCRIPTOR_STARVATION_UNDER_SANITIZERS();
  mock_upstream upstream;
  // No idle upstream connection is kept: the request must open one.
  proxy_process proxy({"--upstream", upstream.url(), "--max-idle-upstream", "0"});
  const auto base = started_descriptors(proxy);
  http_connection client(proxy.port());  // accepted while descriptors are left
  REQUIRE(wait_for_descriptors(proxy.pid(), base + 1));
  REQUIRE(leave_descriptors(proxy.pid(), 0));
  const auto served = upstream.requests_served();
  // A new client meanwhile is told on the reserve descriptor, which is then
  // held again: the slot it lent is not left for the request below.
  CHECK(is_out_of_descriptors_answer(poll_until_status(proxy.port(), "/echo", 503)));

  const auto started = clock_type::now();
  const auto res = client.request("GET", "/echo");
  CHECK(clock_type::now() - started < seconds(10));
  CHECK(is_out_of_descriptors_answer(res));  // before: 502 "cannot connect to upstream: Operation canceled"
  CHECK(header(res, "x-gistproxy-error") == "out_of_descriptors");
  CHECK(res.body.find("out of file descriptors: cannot open a connection to upstream") != std::string::npos);
  CHECK(upstream.requests_served() == served);
  CHECK(log_lines(log_with(proxy, {"\"msg\":\"out of file descriptors\"", "cannot open a connection to upstream"}),
                  {"\"msg\":\"out of file descriptors\"", "cannot open a connection to upstream"}) == 1);

  REQUIRE(raise_descriptor_limit(proxy.pid()));
  CHECK(poll_until_status(proxy.port(), "/echo", 200).status == 200);
}

TEST_CASE("out of descriptors an offload whose blob cannot be written goes upstream as the client sent it") {
  SKIP_DESCRIPTOR_STARVATION_UNDER_SANITIZERS();
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  started_descriptors(proxy);  // each shard keeps an idle upstream connection: the request is forwarded on it
  const auto request = request_for("chat", "find the needle", haystack()).dump();
  http_connection client(proxy.port());
  REQUIRE(client.request("GET", "/echo").status == 200);  // this connection's shard has an upstream connection idle
  REQUIRE(leave_descriptors(proxy.pid(), 0));

  const auto res = client.request("POST", path_for("chat"), request, key_header("chat"));
  CHECK(res.status == 200);
  const auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].find("NEEDLE secret_port=48213") != std::string::npos);  // the output itself, not a reference
  const std::vector<std::string> said{"\"msg\":\"out of file descriptors\"", "the blob store could not open a file"};
  CHECK(log_lines(log_with(proxy, said), said) >= 1);

  REQUIRE(raise_descriptor_limit(proxy.pid()));
  const auto again = poll_until_status(proxy.admin_port(), "/healthz", 200);
  REQUIRE(again.status == 200);
  const auto metrics_after = http_request(proxy.admin_port(), "GET", "/metrics").body;
  CHECK(series_value(metrics_after, "gistproxy_rewrite_failures_total{api=\"chat\",reason=\"store_error\"}") >= 1);
}

TEST_CASE("with few descriptors left an offload and page-in request completes or fails with a clear status and never hangs") {
  SKIP_DESCRIPTOR_STARVATION_UNDER_SANITIZERS();
  const auto left = GENERATE(0, 1, 2, 3);
  INFO(left << " descriptors left");
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  started_descriptors(proxy);
  const auto request = request_for("chat", "find the needle", haystack()).dump();
  REQUIRE(leave_descriptors(proxy.pid(), std::size_t(left)));

  const auto started = clock_type::now();
  const auto res = http_request(proxy.port(), "POST", path_for("chat"), request, key_header("chat"), patience);
  CHECK(clock_type::now() - started < seconds(15));
  INFO(res.status << " " << res.error << " " << res.body.substr(0, 300));
  CHECK(res.error.empty());  // an answer, not a client timeout
  CHECK((res.status == 200 || is_out_of_descriptors_answer(res)));
  if (res.status == 200) CHECK(res.body.find("read_blob") == std::string::npos);

  REQUIRE(raise_descriptor_limit(proxy.pid()));
  REQUIRE(poll_until_status(proxy.port(), "/echo", 200).status == 200);
  const auto healthy = http_request(proxy.port(), "POST", path_for("chat"), request, key_header("chat"), patience);
  REQUIRE(healthy.status == 200);
  CHECK(answer_text("chat", nlohmann::json::parse(healthy.body)) == "found: 2501: config line 2500: NEEDLE secret_port=48213");
}
