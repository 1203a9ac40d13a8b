#include "proxy/net/request_target.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy::proxy;

TEST_CASE("request targets: origin-form kept, absolute-form reduced to its path, dot segments removed") {
  auto [target, expected] = GENERATE(table<std::string, std::string>({
      {"/v1/chat/completions", "/v1/chat/completions"},
      {"/v1/models?limit=5", "/v1/models?limit=5"},
      {"http://api.openai.com/v1/chat/completions", "/v1/chat/completions"},
      {"HTTPS://api.anthropic.com/v1/messages?beta=true", "/v1/messages?beta=true"},
      {"http://host", "/"},
      {"http://host?x=1", "/?x=1"},
      {"/v1/./chat/completions", "/v1/chat/completions"},
      {"/v1/x/../chat/completions", "/v1/chat/completions"},
      {"/v1/x/..", "/v1/"},
      {"/v1//double", "/v1//double"},
      {"/a/b/../../c?q=/../..", "/c?q=/../.."},  // the query is not a path
      {"/", "/"},
      {"/v1/messages#frag", "/v1/messages"},  // a fragment is never forwarded
      {"/v1/models?limit=5#frag?x=1", "/v1/models?limit=5"},
      {"http://user:pw@host/v1/x?q=1#frag", "/v1/x?q=1"},
      {"http://host#frag", "/"},
  }));
  CAPTURE(target);
  auto r = check_request_target("POST", target);
  CHECK(r.error.empty());
  CHECK(r.origin_form == expected);
}

TEST_CASE("request targets that leave the root, hide dots or are not paths are refused") {
  for (const char* bad : {"/../../etc/passwd", "/..", "/v1/../../x", "/v1/%2e%2e/%2E%2E/x", "/v1/%2e/x", "v1/x", "",
                          "http://host/../x"}) {
    CAPTURE(bad);
    auto r = check_request_target("POST", bad);
    CHECK_FALSE(r.error.empty());
  }
  CHECK(check_request_target("OPTIONS", "*").asterisk);
  CHECK_FALSE(check_request_target("GET", "*").error.empty());
}

TEST_CASE("Host: exactly one on HTTP/1.1, with a valid value") {
  CHECK_FALSE(host_field_problem(11, 1, "api.openai.com"));
  CHECK_FALSE(host_field_problem(11, 1, "127.0.0.1:8080"));
  CHECK_FALSE(host_field_problem(11, 1, "[::1]:8080"));
  CHECK_FALSE(host_field_problem(11, 1, ""));  // allowed when the target has no authority
  CHECK_FALSE(host_field_problem(10, 0, ""));
  CHECK(host_field_problem(11, 0, ""));
  CHECK(host_field_problem(11, 2, "a"));
  CHECK(host_field_problem(11, 1, "a b"));
  CHECK(host_field_problem(11, 1, "a/b"));
  CHECK(host_field_problem(11, 1, "user@host"));
}

TEST_CASE("a refused target shows no userinfo and no fragment, the rest as sent") {
  auto [target, shown] = GENERATE(table<std::string, std::string>({
      {"/v1/%2e%2e/x?q=1", "/v1/%2e%2e/x?q=1"},
      {"/v1/x#secret", "/v1/x"},
      {"http://user:secret@host/v1/%2e%2e/x?q#f", "/v1/%2e%2e/x?q"},
      {"HTTPS://user:secret@host", "/"},
      {"http://user:secret@host?q=1", "/?q=1"},
      {"http://user:secret@host#f", "/"},
      {"ftp://user:secret@host/x", "/host/x"},        // any other scheme: all up to the last '@' goes
      {"user:secret@host:443", "/host:443"},          // authority-form
      {"/v1/models/claude@2025:rawPredict", "/v1/models/claude@2025:rawPredict"},  // '@' in a path is kept
      {"*", "/*"},
      {"", "/"},
  }));
  CAPTURE(target);
  CHECK(target_shown(target) == shown);
}

TEST_CASE("request targets whose query is past the query reader's bounds are refused, so no reader sees a part") {
  const std::string head = "/v1/chat/completions?";
  std::string many = head;
  for (int i = 0; i < 1000; ++i) many += "a=1&";
  CHECK(check_request_target("POST", many).error.empty());
  CHECK(check_request_target("POST", head + std::string(10'000, '&') + "key=K").error.empty());
  for (const auto& bad : {many + "key=K", head + std::string(64 * 1024, 'k') + "=v&key=K",
                          "http://h" + head + std::string(70 * 1024, '&') + "key=K#frag"}) {
    CAPTURE(bad.size());
    const auto r = check_request_target("POST", bad);
    CHECK(r.error.find("query string") != std::string::npos);
    CHECK(r.origin_form.empty());
  }
}
