#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"

using namespace gistproxy::testing;

TEST_CASE("a JSON chat completion round-trips unchanged") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  std::string body = R"({"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}]})";
  auto direct = http_request(upstream.port(), "POST", "/v1/chat/completions", body);
  auto proxied = http_request(proxy.port(), "POST", "/v1/chat/completions", body);
  REQUIRE(proxied.ok());
  CHECK(proxied.status == 200);
  CHECK(proxied.body == direct.body);
  CHECK(proxied.headers["content-type"] == "application/json");
}

TEST_CASE("method, path, query, end-to-end headers and body reach the upstream but hop-by-hop ones do not") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url() + "/base/"});
  auto res = http_request(proxy.port(), "PUT", "/echo?a=1&b=two", "payload",
                          {{"Authorization", "Bearer sk-test"},
                           {"X-Custom", "kept"},
                           {"Connection", "close, X-Hop"},
                           {"X-Hop", "dropped"},
                           {"Keep-Alive", "timeout=5"},
                           {"Proxy-Authorization", "Basic abc"}});
  REQUIRE(res.ok());
  auto j = nlohmann::json::parse(res.body);
  CHECK(j["method"] == "PUT");
  CHECK(j["target"] == "/base/echo?a=1&b=two");
  CHECK(j["body"] == "payload");
  auto& h = j["headers"];
  CHECK(h["Authorization"] == "Bearer sk-test");
  CHECK(h["X-Custom"] == "kept");
  CHECK(h["Host"] == "127.0.0.1:" + std::to_string(upstream.port()));
  CHECK_FALSE(h.contains("X-Hop"));
  CHECK_FALSE(h.contains("Keep-Alive"));
  CHECK_FALSE(h.contains("Proxy-Authorization"));
}

TEST_CASE("a 10 MB request body arrives byte for byte") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  std::string body(10 * 1000 * 1000, '\0');
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = char((i * 7919) % 251);
  auto direct = nlohmann::json::parse(http_request(upstream.port(), "POST", "/echo", body).body);
  auto res = http_request(proxy.port(), "POST", "/echo", body);
  REQUIRE(res.ok());
  auto j = nlohmann::json::parse(res.body);
  CHECK(j["body_size"] == body.size());
  CHECK(j["body_sha256"] == direct["body_sha256"]);
}

TEST_CASE("keep-alive: many requests on one client connection reuse one upstream connection") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--threads", "1"});
  http_connection conn(proxy.port());
  for (int i = 0; i < 20; ++i) {
    auto res = conn.request("POST", "/v1/chat/completions", R"({"model":"m","messages":[]})");
    REQUIRE(res.ok());
    CHECK(res.status == 200);
  }
  CHECK(upstream.connections_accepted() == 1);
  CHECK(upstream.requests_served() == 20);
}

TEST_CASE("a response body larger than the buffer streams through intact") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto res = http_request(proxy.port(), "GET", "/bytes?n=3000000");
  REQUIRE(res.ok());
  CHECK(res.body == std::string(3000000, 'b'));
  CHECK(res.headers["content-length"] == "3000000");
}
