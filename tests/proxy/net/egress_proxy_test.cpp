#include "proxy/net/egress_proxy.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::proxy;

TEST_CASE("egress proxy URLs give host, port and credentials") {
  std::string err;
  SECTION("host and port, no credentials") {
    auto p = parse_egress_proxy("http://proxy.corp.example:3128", err);
    REQUIRE(p);
    CHECK(p->host == "proxy.corp.example");
    CHECK(p->port == "3128");
    CHECK(p->authorization.empty());
    CHECK(p->name() == "proxy.corp.example:3128");
  }
  SECTION("no port: 80, as the http scheme says (curl alone assumes 1080)") {
    auto p = parse_egress_proxy("http://proxy.corp.example/", err);
    REQUIRE(p);
    CHECK(p->port == "80");
  }
  SECTION("no scheme: http, as curl and the SDKs read HTTPS_PROXY=host:port") {
    auto p = parse_egress_proxy("Proxy.Corp.Example:8080", err);
    REQUIRE(p);
    CHECK(p->host == "proxy.corp.example");
    CHECK(p->port == "8080");
  }
  SECTION("IPv6 in brackets") {
    auto p = parse_egress_proxy("HTTP://[::1]:3128", err);
    REQUIRE(p);
    CHECK(p->host == "::1");
    CHECK(p->name() == "[::1]:3128");
  }
  SECTION("user:password, percent-decoded, becomes Basic credentials") {
    auto p = parse_egress_proxy("http://alice:s3cr%40t@proxy:3128", err);
    REQUIRE(p);
    CHECK(p->authorization == "Basic YWxpY2U6czNjckB0");  // alice:s3cr@t
    CHECK(p->name() == "proxy:3128");
  }
  SECTION("a user without a password, and an unencoded @ in the password") {
    auto user_only = parse_egress_proxy("http://alice@proxy:3128", err);
    REQUIRE(user_only);
    CHECK(user_only->authorization == "Basic YWxpY2U6");  // alice:
    auto at = parse_egress_proxy("http://alice:s3cr@t@proxy:3128", err);
    REQUIRE(at);
    CHECK(at->authorization == "Basic YWxpY2U6czNjckB0");
  }
}

TEST_CASE("bad egress proxy URLs are refused with a reason that never shows the password") {
  auto url = GENERATE(as<std::string>{}, "https://alice:hunter2@proxy:3128", "socks5://alice:hunter2@proxy:1080",
                      "http://alice:hunter2@proxy:0", "http://alice:hunter2@proxy:65536", "http://alice:hunter2@proxy:abc",
                      "http://alice:hunter2@proxy:", "http://alice:hunter2@", "http://alice:hunter2@pro xy:3128",
                      "http://alice:hunter2@proxy:3128/path", "http://alice:hunter2@proxy:3128?q=1",
                      "http://alice:hunter2%zz@proxy:3128", "http://alice:hunter2%4@proxy:3128",
                      "http://alice:hunter2@::1:3128", "http://alice:hunter2@[::1", "http://alice:hunter2@proxy\r\nX: y",
                      "");
  std::string err;
  CAPTURE(url);
  CHECK_FALSE(parse_egress_proxy(url, err));
  CHECK_FALSE(err.empty());
  CHECK(err.find("hunter2") == std::string::npos);
}

TEST_CASE("without_credentials hides userinfo and keeps the rest") {
  CHECK(without_credentials("http://alice:hunter2@proxy:3128") == "http://***@proxy:3128");
  CHECK(without_credentials("alice:hunter2@proxy:3128") == "***@proxy:3128");
  CHECK(without_credentials("http://a:b@c@proxy/") == "http://***@proxy/");
  CHECK(without_credentials("http://proxy:3128") == "http://proxy:3128");
  // A "path" holding '@' cannot be told from a password holding '/': hidden too.
  CHECK(without_credentials("http://proxy:3128/a@b") == "http://***@b");
}

TEST_CASE("a proxy password holding an unencoded '/', '?' or '#' is never printed, whatever the URL's shape") {
  auto password = GENERATE(as<std::string>{}, "hun/ter2", "hun?ter2", "hun#ter2", "h/u?n#ter2", "hunter2/", "/hunter2",
                           "hunter2@x/y");
  auto scheme = GENERATE(as<std::string>{}, "http://", "", "socks5://");
  const std::string url = scheme + "alice:" + password + "@proxy.corp:3128";
  CAPTURE(url);
  const auto shown = without_credentials(url);
  CHECK(shown == scheme + "***@proxy.corp:3128");
  std::string err;
  CHECK_FALSE(parse_egress_proxy(url, err));
  CHECK_FALSE(err.empty());
  CHECK(err.find("ter2") == std::string::npos);
  CHECK(err.find("alice") == std::string::npos);
}

TEST_CASE("no_proxy lists exempt hosts as curl reads them, with ports and CIDR blocks") {
  struct row {
    const char* no_proxy;
    const char* host;
    const char* port;
    bool exempt;
  };
  auto r = GENERATE(values<row>({
      {"", "api.openai.com", "443", false},
      {"*", "api.openai.com", "443", true},
      {"internal.example,*", "api.openai.com", "443", true},
      {"openai.com", "openai.com", "443", true},
      {"openai.com", "api.openai.com", "443", true},       // subdomains
      {"openai.com", "notopenai.com", "443", false},       // a suffix is not a subdomain
      {".openai.com", "openai.com", "443", true},          // leading dot ignored (curl, Python)
      {".openai.com", "api.openai.com", "443", true},
      {"*.openai.com", "api.openai.com", "443", true},
      {"OpenAI.COM.", "API.openai.com.", "443", true},     // case and trailing dots
      {"api.openai.com", "openai.com", "443", false},
      {" a.example ,\tb.example , api.openai.com", "api.openai.com", "443", true},
      {"a.example b.example", "b.example", "80", true},    // blanks separate too (curl)
      {",,,", "api.openai.com", "443", false},
      {"api.openai.com:443", "api.openai.com", "443", true},
      {"api.openai.com:8443", "api.openai.com", "443", false},
      {"localhost", "localhost", "8080", true},
      {"", "localhost", "8080", false},                    // loopback is not exempt unless listed (curl)
      {"", "127.0.0.1", "8080", false},
      {"127.0.0.1", "127.0.0.1", "8080", true},
      {"127.0.0.1:8080", "127.0.0.1", "8080", true},
      {"127.0.0.1:9090", "127.0.0.1", "8080", false},
      {"127.0.0.2", "127.0.0.1", "8080", false},
      {"127.0.0.0/8", "127.0.0.1", "8080", true},
      {"10.0.0.0/8", "10.200.3.4", "443", true},
      {"10.0.0.0/8", "11.0.0.1", "443", false},
      {"10.1.0.0/15", "10.0.255.255", "443", true},
      {"10.1.0.0/16", "10.0.255.255", "443", false},
      {"0.0.0.0/0", "192.0.2.1", "443", true},
      {"10.0.0.0/33", "10.0.0.1", "443", false},           // nonsense block: no match
      {"10.0.0.0/x", "10.0.0.1", "443", false},
      {"0.1", "10.0.0.1", "443", false},                   // names never suffix-match an address
      {"::1", "::1", "443", true},
      {"[::1]", "::1", "443", true},
      {"[::1]:443", "::1", "443", true},
      {"[::1]:80", "::1", "443", false},
      {"0:0:0:0:0:0:0:1", "::1", "443", true},             // addresses compared, not spellings
      {"2001:db8::/32", "2001:db8:1::5", "443", true},
      {"2001:db8::/33", "2001:db8:8000::1", "443", false},
      {"127.0.0.1", "localhost", "443", false},            // no resolving: names and addresses stay apart
  }));
  CAPTURE(r.no_proxy, r.host, r.port);
  CHECK(no_proxy_matches(r.no_proxy, r.host, r.port) == r.exempt);
}

TEST_CASE("the egress route: --egress-proxy over the environment, per upstream scheme, no_proxy either way") {
  std::string err;
  egress_settings env{"", "http://https-proxy:3128", "http://http-proxy:3128", "internal.example"};
  SECTION("https upstreams take HTTPS_PROXY, http ones HTTP_PROXY") {
    auto https = egress_route(env, true, "api.openai.com", "443", err);
    REQUIRE(https);
    CHECK(https->host == "https-proxy");
    auto http = egress_route(env, false, "api.openai.com", "80", err);
    REQUIRE(http);
    CHECK(http->host == "http-proxy");
    CHECK(err.empty());
  }
  SECTION("no_proxy hosts are reached directly") {
    CHECK_FALSE(egress_route(env, true, "s3.internal.example", "443", err));
    CHECK(err.empty());
  }
  SECTION("no proxy for the scheme: direct") {
    env.http_proxy.clear();
    CHECK_FALSE(egress_route(env, false, "api.openai.com", "80", err));
    CHECK(err.empty());
  }
  SECTION("--egress-proxy serves both schemes, and no_proxy still applies (as curl's --proxy)") {
    env.flag = "http://flag-proxy:8080";
    auto https = egress_route(env, true, "api.openai.com", "443", err);
    REQUIRE(https);
    CHECK(https->host == "flag-proxy");
    auto http = egress_route(env, false, "api.openai.com", "80", err);
    REQUIRE(http);
    CHECK(http->host == "flag-proxy");
    CHECK_FALSE(egress_route(env, true, "internal.example", "443", err));
  }
  SECTION("--egress-proxy none: direct whatever the environment says") {
    env.flag = "none";
    CHECK_FALSE(egress_route(env, true, "api.openai.com", "443", err));
    CHECK(err.empty());
  }
  SECTION("a bad proxy setting that applies is an error naming its source, not its password") {
    env.https_proxy = "socks5://alice:hunter2@proxy:1080";
    CHECK_FALSE(egress_route(env, true, "api.openai.com", "443", err));
    CHECK(err.find("HTTPS_PROXY") != std::string::npos);
    CHECK(err.find("hunter2") == std::string::npos);
  }
}

TEST_CASE("the CONNECT request names the upstream and carries the proxy's credentials") {
  std::string err;
  auto plain = parse_egress_proxy("http://proxy:3128", err);
  REQUIRE(plain);
  CHECK(connect_request(*plain, "api.openai.com", "443") ==
        "CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\n");
  CHECK(connect_request(*plain, "::1", "8443") == "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n");
  auto authed = parse_egress_proxy("http://user:pass@proxy:3128", err);
  REQUIRE(authed);
  CHECK(connect_request(*authed, "api.openai.com", "443") ==
        "CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n"
        "Proxy-Authorization: Basic dXNlcjpwYXNz\r\n\r\n");
}

TEST_CASE("CONNECT answers: 2xx opens the tunnel, 407 asks for credentials, anything else is a refusal") {
  std::string err;
  auto anonymous = *parse_egress_proxy("http://proxy:3128", err);
  auto alice = *parse_egress_proxy("http://alice:hunter2@proxy:3128", err);
  CHECK_FALSE(judge_connect_status(anonymous, 200));
  CHECK_FALSE(judge_connect_status(anonymous, 204));

  auto needs_auth = judge_connect_status(anonymous, 407);
  REQUIRE(needs_auth);
  CHECK(needs_auth->kind == error_kind::upstream_unreachable);
  CHECK(needs_auth->status() == 502);
  CHECK(needs_auth->detail.find("egress proxy proxy:3128 requires authentication (HTTP 407)") != std::string::npos);
  CHECK(needs_auth->detail.find("give user:password") != std::string::npos);

  auto refused_creds = judge_connect_status(alice, 407);
  REQUIRE(refused_creds);
  CHECK(refused_creds->detail.find("refused the credentials") != std::string::npos);
  CHECK(refused_creds->detail.find("hunter2") == std::string::npos);

  for (unsigned status : {100u, 301u, 403u, 500u, 502u}) {
    auto refused = judge_connect_status(alice, status);
    REQUIRE(refused);
    CHECK(refused->kind == error_kind::upstream_unreachable);
    CHECK(refused->detail == "egress proxy proxy:3128 refused CONNECT (HTTP " + std::to_string(status) + ")");
  }
}
