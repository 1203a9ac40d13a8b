#include "proxy/net/admin_auth.hpp"

#include <catch2/catch.hpp>

#include "proxy/runtime/config.hpp"

using namespace gistproxy::proxy;

TEST_CASE("only loopback admin listen addresses count as loopback") {
  CHECK(is_loopback_listen("127.0.0.1:9464"));
  CHECK(is_loopback_listen("127.1.2.3:0"));
  CHECK(is_loopback_listen("localhost:9464"));
  CHECK(is_loopback_listen("[::1]:9464"));
  CHECK_FALSE(is_loopback_listen("0.0.0.0:9464"));
  CHECK_FALSE(is_loopback_listen("[::]:9464"));
  CHECK_FALSE(is_loopback_listen("10.0.0.5:9464"));
  CHECK_FALSE(is_loopback_listen("127.evil.example:9464"));
  CHECK_FALSE(is_loopback_listen("[::1"));
  CHECK_FALSE(is_loopback_listen(""));
}

TEST_CASE("the live view asks for the admin token in a bearer header or the token query parameter") {
  CHECK(admin_authorized("", "", "/api/summary"));
  CHECK(admin_authorized("s3cret", "Bearer s3cret", "/api/summary"));
  CHECK(admin_authorized("s3cret", "", "/?token=s3cret"));
  CHECK(admin_authorized("s3cret", "", "/?x=1&token=s3cret"));
  CHECK_FALSE(admin_authorized("s3cret", "", "/api/summary"));
  CHECK_FALSE(admin_authorized("s3cret", "Bearer s3cre", "/api/summary"));
  CHECK_FALSE(admin_authorized("s3cret", "Bearer s3cretX", "/"));
  CHECK_FALSE(admin_authorized("s3cret", "Basic s3cret", "/"));
  CHECK_FALSE(admin_authorized("s3cret", "", "/?token=s3cre"));
  CHECK_FALSE(admin_authorized("s3cret", "", "/?xtoken=s3cret"));
  CHECK_FALSE(admin_authorized("s3cret", "", "/?token="));
}

TEST_CASE("serve refuses a non-loopback admin listener without an admin token") {
  const char* no_env[] = {nullptr};
  auto refused = parse_serve_args({"--admin-listen", "0.0.0.0:9464"}, no_env);
  CHECK_FALSE(refused.cfg);
  CHECK(refused.exit_code == 2);
  CHECK(refused.message.find("--admin-token") != std::string::npos);
  auto with_flag = parse_serve_args({"--admin-listen", "0.0.0.0:9464", "--admin-token", "t0k"}, no_env);
  REQUIRE(with_flag.cfg);
  CHECK(with_flag.cfg->admin_token == "t0k");
  const char* env[] = {"GISTPROXY_ADMIN_TOKEN=from-env", nullptr};
  auto with_env = parse_serve_args({"--admin-listen", "0.0.0.0:9464"}, env);
  REQUIRE(with_env.cfg);
  CHECK(with_env.cfg->admin_token == "from-env");
  CHECK(parse_serve_args({}, no_env).cfg->admin_token.empty());
  CHECK_FALSE(parse_serve_args({"--admin-token", ""}, no_env).cfg);
}

TEST_CASE("the admin token's Bearer scheme is matched in any case, as RFC 9110 says of auth schemes") {
  CHECK(admin_authorized("s3cret", "bearer s3cret", "/"));
  CHECK(admin_authorized("s3cret", "BEARER s3cret", "/"));
  CHECK(admin_authorized("s3cret", "bEaReR s3cret", "/"));
  CHECK(admin_authorized("s3cret", "Bearer   s3cret", "/"));  // 1*SP
  CHECK_FALSE(admin_authorized("s3cret", "bearer S3CRET", "/"));  // the token itself is exact
  CHECK_FALSE(admin_authorized("s3cret", "bearers3cret", "/"));
  CHECK_FALSE(admin_authorized("s3cret", "Bearer", "/"));
  CHECK_FALSE(admin_authorized("s3cret", "Bearer ", "/"));
  CHECK_FALSE(admin_authorized("s3cret", "Bearerx s3cret", "/"));
}

TEST_CASE("the live view's Host must be a loopback name, the listen address or an allowed name") {
  const std::vector<std::string> none, allowed = {"gistproxy.internal", "fd00::5"};
  for (const char* host : {"127.0.0.1", "127.0.0.1:9464", "127.3.4.5:1", "localhost", "LOCALHOST:9464", "localhost.",
                           "[::1]", "[::1]:9464", ""})
    CHECK(admin_host_allowed(host, "127.0.0.1:9464", none));
  for (const char* host : {"evil.example", "evil.example:9464", "127.0.0.1.evil.example", "localhost.evil.example",
                           "127.evil", "[::2]:9464", "::1", "[::1", "gistproxy.internal", "10.0.0.5:9464", "0.0.0.0:9464"})
    CHECK_FALSE(admin_host_allowed(host, "127.0.0.1:9464", none));
  CHECK(admin_host_allowed("10.0.0.5:9464", "10.0.0.5:9464", none));  // the listen address
  CHECK(admin_host_allowed("Gistproxy.Internal:9464", "0.0.0.0:9464", allowed));
  CHECK(admin_host_allowed("[fd00::5]:9464", "[::]:9464", allowed));
  CHECK_FALSE(admin_host_allowed("0.0.0.0:9464", "0.0.0.0:9464", none));  // an unspecified address names nothing
  CHECK_FALSE(admin_host_allowed("[::]:9464", "[::]:9464", none));
  CHECK(admin_host_allowed("anything.example", "0.0.0.0:9464", {"*"}));
}

TEST_CASE("the admin allowed hosts flag takes names or addresses separated by commas, and refuses ports, paths and gaps") {
  const char* no_env[] = {nullptr};
  auto ok = parse_serve_args({"--admin-allowed-hosts", "gistproxy.internal,10.0.0.5,[fd00::5],*"}, no_env);
  REQUIRE(ok.cfg);
  CHECK(ok.cfg->admin_allowed_hosts == std::vector<std::string>{"gistproxy.internal", "10.0.0.5", "fd00::5", "*"});
  CHECK(parse_serve_args({}, no_env).cfg->admin_allowed_hosts.empty());
  for (const char* bad : {"", "a,,b", "a,", "host:9464", "http://host", "a b", "user@host"}) {
    INFO(bad);
    CHECK_FALSE(parse_serve_args({"--admin-allowed-hosts", bad}, no_env).cfg);
  }
  CHECK(parse_serve_args({"--admin-max-connections", "8"}, no_env).cfg->admin_max_connections == 8);
  CHECK(parse_serve_args({}, no_env).cfg->admin_max_connections == 64);
  CHECK_FALSE(parse_serve_args({"--admin-max-connections", "0"}, no_env).cfg);
}
