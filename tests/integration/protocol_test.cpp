// Request lines, Host fields and upstream answers that RFC 9112 rules on:
// what gistproxy forwards stays an origin-form path under --upstream's base.
#include <catch2/catch.hpp>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "tests/integration/harness.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;

namespace {

std::string echoed_target(const std::string& raw) {
  auto at = raw.find("\r\n\r\n");
  if (at == std::string::npos) return "(no response)";
  auto j = nlohmann::json::parse(raw.substr(at + 4), nullptr, false);
  return j.is_object() ? j.value("target", "(none)") : "(not json)";
}

}  // namespace

TEST_CASE("an absolute-form request target is forwarded as its path, never as a path under the base") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url() + "/base"});
  auto raw = raw_exchange(proxy.port(), "GET http://api.openai.com/echo?x=1 HTTP/1.1\r\nHost: api.openai.com\r\n"
                                        "Connection: close\r\n\r\n");
  REQUIRE(raw.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(echoed_target(raw) == "/base/echo?x=1");
}

TEST_CASE("dot segments never let the forwarded path leave --upstream's base") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url() + "/base"});
  SECTION("inside the path: removed") {
    auto raw = raw_exchange(proxy.port(), "GET /v1/../echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    REQUIRE(raw.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(echoed_target(raw) == "/base/echo");
  }
  SECTION("climbing above the root, or spelled %2e%2e: refused") {
    for (const char* target : {"/../../echo", "/v1/../../echo", "/%2e%2e/echo"}) {
      CAPTURE(target);
      auto raw = raw_exchange(proxy.port(), std::string("GET ") + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      CHECK(raw.rfind("HTTP/1.1 400", 0) == 0);
    }
    CHECK(upstream.requests_served() == 0);
  }
}

TEST_CASE("a duplicate Host, a missing Host on HTTP/1.1 or an invalid Host value is 400") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  for (const char* head : {"GET /echo HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n",
                           "GET /echo HTTP/1.1\r\nConnection: close\r\n\r\n",
                           "GET /echo HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n"}) {
    CAPTURE(head);
    CHECK(raw_exchange(proxy.port(), head).rfind("HTTP/1.1 400", 0) == 0);
  }
  CHECK(upstream.requests_served() == 0);
  CHECK(raw_exchange(proxy.port(), "GET /echo HTTP/1.0\r\n\r\n").rfind("HTTP/1.", 0) == 0);  // 1.0 needs none
}

TEST_CASE("OPTIONS * is answered by gistproxy, never forwarded as a path") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto raw = raw_exchange(proxy.port(), "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(raw.rfind("HTTP/1.1 204", 0) == 0);
  CHECK(raw.find("Allow: ") != std::string::npos);
  CHECK(upstream.requests_served() == 0);
}

TEST_CASE("an upstream 101 nobody asked for becomes a 502, not a relayed protocol switch") {
  raw_upstream upstream({{"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nraw bytes", true}});
  proxy_process proxy({"--upstream", upstream.url()});
  auto res = http_request(proxy.port(), "GET", "/v1/models");
  CHECK(res.status == 502);
  CHECK(res.headers.count("transfer-encoding") == 0);
}

TEST_CASE("a trailer field never reaches the upstream, even one named like a header of the request") {
  raw_upstream upstream({{raw_upstream::response("{}")}});
  proxy_process proxy({"--upstream", upstream.url()});
  auto raw = raw_exchange(proxy.port(),
                          "POST /v1/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer mine\r\nConnection: close\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nAuthorization: Bearer stolen\r\nX-Evil: 1\r\n\r\n");
  REQUIRE(raw.rfind("HTTP/1.1 200", 0) == 0);
  REQUIRE(upstream.heads().size() == 1);
  const std::string head = upstream.heads()[0];
  CHECK(head.find("Bearer mine") != std::string::npos);
  CHECK(head.find("stolen") == std::string::npos);  // was: forwarded as a second Authorization
  CHECK(head.find("X-Evil") == std::string::npos);
  CHECK(upstream.bodies()[0] == "{}");
}

TEST_CASE("a response completed during a drain says Connection: close") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  std::string raw;
  std::thread client([&] {
    raw = raw_exchange(proxy.port(), "GET /slow?ms=1000 HTTP/1.1\r\nHost: x\r\n\r\n", std::chrono::seconds(10));
  });
  for (int i = 0; i < 500 && upstream.requests_served() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(upstream.requests_served() == 1);  // in flight
  REQUIRE(::kill(proxy.pid(), SIGTERM) == 0);  // the drain starts
  client.join();
  REQUIRE(raw.rfind("HTTP/1.1 200", 0) == 0);
  auto head = raw.substr(0, raw.find("\r\n\r\n"));
  CHECK(head.find("Connection: close") != std::string::npos);
}

namespace {

// An idle client: connected, sending nothing.
int idle_client(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

}  // namespace

TEST_CASE("at --max-connections idle clients cannot take the proxy: /healthz answers, a waiting client is served later") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--max-connections", "3"});
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(idle_client(proxy.port()));
  auto metrics = metrics_with(proxy.admin_port(), {"gistproxy_active_connections 3", "gistproxy_accept_paused_total{reason=\"limit\"} 1"});
  CHECK(series_value(metrics, "gistproxy_accept_paused_total{reason=\"limit\"}") >= 1);
  CHECK(http_request(proxy.admin_port(), "GET", "/healthz").status == 200);

  http_result waiting;
  std::thread client([&] { waiting = http_request(proxy.port(), "GET", "/echo", {}, {}, std::chrono::seconds(20)); });
  ::close(idle.back());  // one idle client leaves: the waiting one is accepted
  idle.pop_back();
  client.join();
  CHECK(waiting.status == 200);
  for (int fd : idle) ::close(fd);
}
