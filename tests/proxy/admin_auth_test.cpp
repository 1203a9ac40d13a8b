#include "proxy/net/admin_auth.hpp"

#include <catch2/catch.hpp>

#include "proxy/config.hpp"

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
