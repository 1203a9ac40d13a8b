#include <catch2/catch.hpp>
#include <cstdlib>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

namespace {

// A private CA and a server certificate for `name`, made with the openssl CLI.
struct test_pki {
  std::filesystem::path dir, ca, cert, key;
  explicit test_pki(const std::string& name) {
    dir = temp_path("pki-" + name);
    std::filesystem::create_directories(dir);
    ca = dir / "ca.pem";
    cert = dir / "server.pem";
    key = dir / "server.key";
    std::string d = dir.string();
    std::string script =
        "cd '" + d + "' && "
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj '/CN=gistproxy test CA' "
        "  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign >/dev/null 2>&1 && "
        "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj '/CN=" + name + "' >/dev/null 2>&1 && "
        "printf 'subjectAltName=DNS:" + name + "\\nbasicConstraints=CA:FALSE\\n' > ext.cnf && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 "
        "  -extfile ext.cnf >/dev/null 2>&1";
    REQUIRE(std::system(script.c_str()) == 0);
  }
};

}  // namespace

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
