// The admin listener as the outside world meets it: a page of another site
// whose name now resolves to 127.0.0.1 (DNS rebinding) gets no live view;
// HEAD answers carry no body; the token's scheme is case-insensitive; and
// hundreds of idle connections, with few descriptors left, neither stop
// /healthz nor the proxy listener.
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/harness.hpp"
#include "tests/support/descriptors.hpp"

using namespace gistproxy::testing;

TEST_CASE("the live view answers 421 to a Host that does not name the admin listener, and serves its own names") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  const auto admin = proxy.admin_port();
  const auto port = ":" + std::to_string(admin);
  for (const std::string target : {"/", "/api/summary", "/api/conversations"}) {
    INFO(target);
    for (const std::string& host : std::vector<std::string>{"evil.example", "evil.example" + port, "127.0.0.1.evil.example",
                                                            "localhost.evil.example", "[::2]" + port})
      CHECK(http_request(admin, "GET", target, {}, {{"Host", host}}).status == 421);
    for (const std::string& host : std::vector<std::string>{"127.0.0.1" + port, "localhost" + port, "LocalHost.", "[::1]" + port,
                                                            "127.9.9.9"})
      CHECK(http_request(admin, "GET", target, {}, {{"Host", host}}).status == 200);
  }
  // Probes and scrapers name the service however the network does: not the live view's rule.
  CHECK(http_request(admin, "GET", "/metrics", {}, {{"Host", "evil.example"}}).status == 200);
  CHECK(http_request(admin, "GET", "/healthz", {}, {{"Host", "gistproxy:9464"}}).status == 200);
}

TEST_CASE("the live view answers for the names --admin-allowed-hosts adds, and no others") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--admin-allowed-hosts", "gistproxy.internal,ops.example"});
  const auto admin = proxy.admin_port();
  for (const std::string host : {"gistproxy.internal:9464", "OPS.example", "localhost"})
    CHECK(http_request(admin, "GET", "/api/summary", {}, {{"Host", host}}).status == 200);
  for (const std::string host : {"gistproxy.internal.evil.example", "evil.example"})
    CHECK(http_request(admin, "GET", "/api/summary", {}, {{"Host", host}}).status == 421);
}

TEST_CASE("HEAD answers on the admin listener are the GET answer's header without a body") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  const auto admin = proxy.admin_port();
  for (const std::string target : {"/", "/api/summary", "/api/conversations", "/metrics", "/healthz", "/readyz", "/nope"}) {
    INFO(target);
    // Pipelined: what follows HEAD's header must be the next answer, not a body.
    auto raw = raw_exchange(admin, "HEAD " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                   "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const auto end = raw.find("\r\n\r\n");
    REQUIRE(end != std::string::npos);
    const auto head = raw.substr(0, end);
    CHECK(head.find("Content-Length: 0\r") == std::string::npos);  // the GET answer's length, announced
    CHECK(head.find("Content-Length: ") != std::string::npos);
    CHECK(raw.substr(end + 4, 9) == "HTTP/1.1 ");  // the next answer, right after the header
    const auto get = http_request(admin, "GET", target);
    CHECK(head.find("Content-Length: " + std::to_string(get.body.size())) != std::string::npos);
  }
}

TEST_CASE("the admin token is accepted whatever the case of its Bearer scheme") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--admin-token", "t0k-case"});
  for (const std::string scheme : {"Bearer", "bearer", "BEARER", "bEaReR"}) {
    INFO(scheme);
    CHECK(http_request(proxy.admin_port(), "GET", "/api/summary", {}, {{"Authorization", scheme + " t0k-case"}}).status == 200);
  }
  CHECK(http_request(proxy.admin_port(), "GET", "/api/summary", {}, {{"Authorization", "Basic t0k-case"}}).status == 401);
  CHECK(http_request(proxy.admin_port(), "GET", "/api/summary", {}, {{"Authorization", "bearer t0k-casE"}}).status == 401);
}

namespace {

// CPU time the process has used (user + system), in clock ticks.
long cpu_ticks(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  long utime = 0, stime = 0;
  for (int i = 3; fields >> f && i <= 15; ++i) {
    if (i == 14) utime = std::stol(f);
    if (i == 15) stime = std::stol(f);
  }
  return utime + stime;
}

}  // namespace

TEST_CASE("out of descriptors the admin listener backs off instead of spinning, and answers once some are free") {
  SKIP_DESCRIPTOR_STARVATION_UNDER_SANITIZERS();
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  const auto base = started_descriptors(proxy);
  const rlimit none_left{rlim_t(base + 4), rlim_t(base + 4)};
  REQUIRE(::prlimit(proxy.pid(), RLIMIT_NOFILE, &none_left, nullptr) == 0);
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i)
    if (int fd = idle_connection(proxy.admin_port()); fd >= 0) idle.push_back(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the accepts fail: EMFILE
  const auto before = cpu_ticks(proxy.pid());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto spent = cpu_ticks(proxy.pid()) - before;
  CHECK(spent < 40);  // a spinning accept loop burns most of a core: ~160 ticks in 2 s here
  for (int fd : idle) ::close(fd);  // their sessions end, descriptors come back
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  http_result health;
  do {
    health = http_request(proxy.admin_port(), "GET", "/healthz", {}, {}, std::chrono::seconds(2));
  } while (health.status != 200 && std::chrono::steady_clock::now() < deadline);
  CHECK(health.status == 200);
  const auto metrics = http_request(proxy.admin_port(), "GET", "/metrics").body;
  CHECK(series_value(metrics, "gistproxy_accept_paused_total{reason=\"descriptors\"}") >= 1);
}

TEST_CASE("four hundred idle admin connections with few descriptors left stop neither /healthz nor the proxy listener") {
  SKIP_DESCRIPTOR_STARVATION_UNDER_SANITIZERS();
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});  // --admin-max-connections: 64
  // Few descriptors: what it has open now and 100 more (the process raised
  // its soft limit at start; this lowers both, as a tight container would).
  const auto base = started_descriptors(proxy);
  REQUIRE(base > 0);
  const rlimit tight{rlim_t(base + 100), rlim_t(base + 100)};
  REQUIRE(::prlimit(proxy.pid(), RLIMIT_NOFILE, &tight, nullptr) == 0);

  std::vector<int> idle;
  for (int i = 0; i < 400; ++i)
    if (int fd = idle_connection(proxy.admin_port()); fd >= 0) idle.push_back(fd);
  CHECK(idle.size() == 400);  // the kernel's backlog holds what is not accepted

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  http_result health;
  do {
    health = http_request(proxy.admin_port(), "GET", "/healthz", {}, {}, std::chrono::seconds(2));
  } while (health.status != 200 && std::chrono::steady_clock::now() < deadline);
  CHECK(health.status == 200);
  CHECK(http_request(proxy.port(), "GET", "/echo", {}, {}, std::chrono::seconds(5)).status == 200);
  // The admin listener holds at most its limit: the rest were closed, least recently active first.
  CHECK(open_descriptors(proxy.pid()) <= base + 64 + 8);
  auto metrics = http_request(proxy.admin_port(), "GET", "/metrics").body;
  CHECK(series_value(metrics, "gistproxy_accept_paused_total{reason=\"admin_limit\"}") >= 330);
  for (int fd : idle) ::close(fd);
}
