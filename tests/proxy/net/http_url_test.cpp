#include "proxy/net/http_url.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::proxy;

TEST_CASE("base URLs are split into scheme, host, port and path") {
  std::string err;
  auto u = parse_http_url("https://api.openai.com", err);
  REQUIRE(u);
  CHECK(u->tls);
  CHECK(u->port == "443");
  CHECK(u->host_header() == "api.openai.com");
  CHECK(u->join("/v1/chat/completions?x=1") == "/v1/chat/completions?x=1");

  auto p = parse_http_url("http://127.0.0.1:8000/openai/", err);
  REQUIRE(p);
  CHECK_FALSE(p->tls);
  CHECK(p->host_header() == "127.0.0.1:8000");
  CHECK(p->join("/v1/responses") == "/openai/v1/responses");

  auto v6 = parse_http_url("http://[::1]:9000", err);
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->host_header() == "[::1]:9000");
}

TEST_CASE("unsupported URLs are refused with a reason") {
  std::string err;
  CHECK_FALSE(parse_http_url("ftp://x", err));
  CHECK(err.find("not an http") != std::string::npos);
  CHECK_FALSE(parse_http_url("http://user:pw@host", err));
  CHECK_FALSE(parse_http_url("http://host:abc", err));
  CHECK_FALSE(parse_http_url("http://", err));
}

TEST_CASE("a base URL's refusal never prints the credentials it carries, '/', '?' or '#' in the password too") {
  auto url = GENERATE(as<std::string>{}, "http://user:hunter2@host", "https://user:hun/ter2@host:8443",
                      "https://user:hun?ter2@host", "https://user:hun#ter2@host/v1", "ftp://user:hunter2@host");
  CAPTURE(url);
  std::string err;
  CHECK_FALSE(parse_http_url(url, err));
  CHECK_FALSE(err.empty());
  CHECK(err.find("ter2") == std::string::npos);
}
