#include "proxy/net/proxy_error.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace gistproxy::proxy;

TEST_CASE("errors map to status, source and retryability in one place") {
  CHECK(proxy_error{error_kind::upstream_unreachable, ""}.status() == 502);
  CHECK(proxy_error{error_kind::upstream_tls, ""}.status() == 502);
  CHECK(proxy_error{error_kind::upstream_timeout, ""}.status() == 504);
  CHECK(proxy_error{error_kind::body_too_large, ""}.status() == 413);
  CHECK(proxy_error{error_kind::bad_request, ""}.status() == 400);
  CHECK(proxy_error{error_kind::body_too_large, ""}.source() == error_source::downstream);
  CHECK(proxy_error{error_kind::upstream_timeout, ""}.retryable());
  CHECK_FALSE(proxy_error{error_kind::upstream_tls, ""}.retryable());
}

TEST_CASE("the error body parses as both an OpenAI and an Anthropic error") {
  auto j = nlohmann::json::parse(proxy_error{error_kind::upstream_timeout, "upstream timed out \"x\""}.json_body());
  CHECK(j["type"] == "error");                        // Anthropic envelope
  CHECK(j["error"]["type"] == "upstream_timeout");    // both
  CHECK(j["error"]["code"] == "upstream_timeout");    // OpenAI
  CHECK(j["error"]["message"].get<std::string>().find("timed out") != std::string::npos);
  CHECK(j["error"]["source"] == "upstream");
}
