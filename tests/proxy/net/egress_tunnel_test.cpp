// The CONNECT exchange on Beast's test stream: every answer a proxy can give
// and every point where the I/O can fail, without a network.
#include "proxy/net/egress_tunnel.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <catch2/catch.hpp>

using namespace gistproxy::proxy;
namespace test = boost::beast::test;

namespace {

const egress_proxy& alice() {
  static const egress_proxy via = [] {
    std::string err;
    return *parse_egress_proxy("http://alice:s3cret@proxy.test:3128", err);
  }();
  return via;
}

struct outcome {
  bool finished = false;
  std::optional<proxy_error> failure;
  std::string request;  // what the proxy received
  std::size_t left_in_buffer = 0;
};

// Runs connect_through against a proxy that answers `answer` (then closes
// when `close_after`), through a stream that fails at its fail_count-th
// operation (0: never).
template <class Verdict = same_error>
outcome run_tunnel(const std::string& answer, bool close_after, std::size_t fail_at = 0, Verdict verdict = {}) {
  asio::io_context ioc;
  test::fail_count fc(fail_at ? fail_at : 1'000'000);
  test::stream ours(ioc, fc), proxy(ioc);
  ours.connect(proxy);
  ours.append(answer);
  if (close_after) proxy.close();
  beast::flat_buffer buffer;
  outcome out;
  asio::co_spawn(ioc, connect_through(ours, buffer, alice(), "api.example.com", "443", verdict),
                 [&](std::exception_ptr e, std::optional<proxy_error> failure) {
                   REQUIRE_FALSE(e);
                   out.finished = true;
                   out.failure = std::move(failure);
                 });
  ioc.run_for(std::chrono::seconds(5));
  out.request = std::string(proxy.str());
  out.left_in_buffer = buffer.size();
  return out;
}

}  // namespace

TEST_CASE("a 2xx CONNECT answer opens the tunnel, and the request names the upstream with the proxy's credentials") {
  auto answer = GENERATE(as<std::string>{}, "HTTP/1.1 200 Connection established\r\n\r\n",
                         "HTTP/1.0 200 OK\r\nProxy-Agent: test\r\n\r\n", "HTTP/1.1 204 No Content\r\n\r\n");
  auto out = run_tunnel(answer, false);
  REQUIRE(out.finished);
  CHECK_FALSE(out.failure);
  CHECK(out.request ==
        "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n"
        "Proxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n\r\n");
  CHECK(out.left_in_buffer == 0);
}

TEST_CASE("CONNECT answers that open no tunnel are clear errors naming the proxy, never its credentials") {
  struct row {
    std::string answer;
    bool close_after;
    error_kind kind;
    std::string says;
  };
  auto r = GENERATE(values<row>({
      {"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n",
       false, error_kind::upstream_unreachable, "egress proxy proxy.test:3128 requires authentication (HTTP 407)"},
      {"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", false, error_kind::upstream_unreachable,
       "egress proxy proxy.test:3128 refused CONNECT (HTTP 403)"},
      {"HTTP/1.1 200 OK\r\n\r\nextra", false, error_kind::upstream_bad_response, "sent bytes after its CONNECT answer"},
      {"HTTP/1.1 200 OK\r\nX: " + std::string(20'000, 'a') + "\r\n\r\n", false, error_kind::upstream_bad_response,
       "CONNECT answer head over 16 KiB"},
      {"SSH-2.0-OpenSSH_9.2\r\n\r\n", false, error_kind::upstream_bad_response, "sent malformed HTTP answering CONNECT"},
      {"", true, error_kind::upstream_unreachable, "closed or failed the connection during CONNECT"},
      {"HTTP/1.1 200 OK\r\nX-Half:", true, error_kind::upstream_unreachable, "closed or failed the connection"},
  }));
  CAPTURE(r.answer.substr(0, 60));
  auto out = run_tunnel(r.answer, r.close_after);
  REQUIRE(out.finished);
  REQUIRE(out.failure);
  CHECK(out.failure->kind == r.kind);
  CHECK(out.failure->status() == 502);
  CHECK(out.failure->detail.find(r.says) != std::string::npos);
  CHECK(out.failure->detail.find("s3cret") == std::string::npos);
  CHECK(out.failure->detail.find("YWxpY2U6czNjcmV0") == std::string::npos);
}

TEST_CASE("an I/O failure at any point of the CONNECT exchange is an error, never an open tunnel") {
  const std::string answer = "HTTP/1.1 200 Connection established\r\n\r\n";
  std::size_t failures = 0;
  for (std::size_t at = 1; at < 10; ++at) {
    CAPTURE(at);
    auto out = run_tunnel(answer, false, at);
    REQUIRE(out.finished);
    if (!out.failure) break;  // past the last operation: the exchange succeeds
    ++failures;
    CHECK(out.failure->kind == error_kind::upstream_unreachable);
    CHECK(out.failure->detail.find("egress proxy proxy.test:3128") != std::string::npos);
  }
  CHECK(failures >= 2);  // at least the write and the read
}

TEST_CASE("a CONNECT cut by the caller's deadline is an upstream timeout") {
  // The upstream pool's deadline closes the socket; its verdict names the timeout.
  auto deadline_verdict = [](const error_code& ec) { return ec ? error_code(beast::error::timeout) : ec; };
  auto out = run_tunnel("", true, 0, deadline_verdict);
  REQUIRE(out.finished);
  REQUIRE(out.failure);
  CHECK(out.failure->kind == error_kind::upstream_timeout);
  CHECK(out.failure->status() == 504);
  CHECK(out.failure->detail == "egress proxy proxy.test:3128 did not answer CONNECT in time");
}
