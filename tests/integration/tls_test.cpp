#include <catch2/catch.hpp>
#include <cstdlib>

#include "tests/integration/harness.hpp"
#include "tests/integration/test_pki.hpp"

using namespace gistproxy::testing;

TEST_CASE("TLS upstreams are verified against the system store plus --upstream-ca") {
  test_pki pki("localhost");
  mock_upstream upstream({"127.0.0.1", 0, pki.cert.string(), pki.key.string()});
  std::string body = R"({"model":"gpt-4o","messages":[]})";

  SECTION("trusted private CA: proxied over TLS with SNI and hostname check") {
    proxy_process proxy({"--upstream", upstream.url(), "--upstream-ca", pki.ca.string()});
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", body);
    REQUIRE(res.ok());
    CHECK(res.status == 200);
    CHECK(res.body.find("Hello from the mock.") != std::string::npos);
    auto echo = http_request(proxy.port(), "GET", "/echo");
    CHECK(nlohmann::json::parse(echo.body)["headers"]["Host"] == "localhost:" + std::to_string(upstream.port()));
  }
  SECTION("untrusted CA: 502 upstream_tls") {
    proxy_process proxy({"--upstream", upstream.url()});
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", body);
    REQUIRE(res.ok());
    CHECK(res.status == 502);
    CHECK(nlohmann::json::parse(res.body)["error"]["type"] == "upstream_tls");
  }
}

TEST_CASE("a certificate for another host name is refused") {
  test_pki pki("not-this-host.example");
  mock_upstream upstream({"127.0.0.1", 0, pki.cert.string(), pki.key.string()});
  proxy_process proxy({"--upstream", "https://localhost:" + std::to_string(upstream.port()), "--upstream-ca",
                       pki.ca.string()});
  auto res = http_request(proxy.port(), "GET", "/echo");
  REQUIRE(res.ok());
  CHECK(res.status == 502);
  CHECK(nlohmann::json::parse(res.body)["error"]["type"] == "upstream_tls");
}

TEST_CASE("an unusable --upstream-ca stops startup with a clear message") {
  CHECK_THROWS_WITH(proxy_process({"--upstream", "https://localhost:1", "--upstream-ca", "/nonexistent/ca.pem"}),
                    Catch::Contains("--upstream-ca"));
}
