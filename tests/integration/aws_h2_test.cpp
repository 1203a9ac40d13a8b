// Client-signed AWS requests over HTTP/2 (issue 50): the AWS SDK for
// JavaScript, at its defaults, signs SigV4 over HTTP/2 with :authority among
// its SignedHeaders (no Host). Such a request goes upstream over HTTP/2, its
// pseudo-headers and fields as the client sent them, so an upstream checking
// the signature as AWS does (tests/support/sigv4_verifier) verifies it: a
// Converse answer and a Converse stream. A signature over Host alone still
// goes over HTTP/1.1; an upstream that does not speak HTTP/2 fails the
// request clearly, counted, never sent another way.
#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"
#include "tests/integration/test_pki.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/h2_client.hpp"
#include "tests/support/mock_upstream_h2.hpp"
#include "tests/support/raw_upstream.hpp"
#include "tests/support/sigv4_verifier.hpp"

using namespace gistproxy::testing;

namespace {

const std::string secret = "client-secret-key";
const std::string converse_body = R"({"messages":[{"role":"user","content":[{"text":"hello"}]}]})";

struct signed_h2_request {
  std::vector<std::pair<std::string, std::string>> headers;  // what h2_client sends after its pseudo-headers
};

// As the SDK signs over HTTP/2: h2_client's pseudo-headers (:authority
// 127.0.0.1, :scheme http) and these fields, SignedHeaders listing them all.
signed_h2_request sign_over_h2(const std::string& path, const std::string& body, bool sign_authority = true) {
  std::vector<std::pair<std::string, std::string>> fields{
      {"content-type", "application/json"},
      {"amz-sdk-invocation-id", "5d8c2d8e-7c1e-4a43-9d7e-0c3f2a1b4e55"},
      {"amz-sdk-request", "attempt=1; max=3"},
      {"x-amz-date", "20261129T120000Z"},
  };
  auto signed_fields = fields;
  if (sign_authority) signed_fields.emplace_back(":authority", "127.0.0.1");
  else signed_fields.emplace_back("host", "127.0.0.1");
  signed_h2_request r{fields};
  if (!sign_authority) r.headers.emplace_back("host", "127.0.0.1");
  r.headers.emplace_back("authorization",
                         sign_sigv4("POST", path, signed_fields, body, "AKIDCLIENT", secret, "us-east-1", "bedrock"));
  return r;
}

h2_client::response exchange_h2(std::uint16_t port, const std::string& path, const std::string& body,
                                const signed_h2_request& r) {
  h2_client client(port);
  const auto stream = client.submit("POST", path, body, r.headers);
  REQUIRE(client.pump_until([&] { return client.responses[stream].closed; }));
  return client.responses[stream];
}

bool log_holds(const proxy_process& proxy, const std::string& needle) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (proxy.log().find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("aws over h2: a Converse request signed over :authority reaches Bedrock over HTTP/2 and verifies") {
  mock_upstream_h2 upstream(secret);
  proxy_process proxy({"--upstream", upstream.url()});
  const auto path = path_for("bedrock-converse");
  const auto answer = exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body));
  const auto seen = upstream.requests();
  REQUIRE(seen.size() == 1);
  INFO(seen[0].why);
  CHECK(seen[0].verified);
  CHECK(seen[0].field(":authority") == "127.0.0.1");
  CHECK(seen[0].field(":path") == path);
  CHECK(seen[0].field("host").empty());
  CHECK(seen[0].body == converse_body);
  CHECK(answer.status == 200);
  CHECK(answer.body.find("verified over h2") != std::string::npos);
  CHECK(log_holds(proxy, R"("upstream_protocol":"HTTP/2")"));
}

TEST_CASE("aws over h2: a ConverseStream answer signed over :authority comes back byte for byte") {
  mock_upstream_h2 upstream(secret);
  proxy_process proxy({"--upstream", upstream.url()});
  const auto path = path_for("bedrock-converse", true);
  const auto answer = exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body));
  const auto seen = upstream.requests();
  REQUIRE(seen.size() == 1);
  INFO(seen[0].why);
  CHECK(seen[0].verified);
  CHECK(answer.status == 200);
  CHECK(answer.body == mock_upstream_h2::converse_stream_bytes());
}

TEST_CASE("aws over h2: a signature over Host alone still goes to Bedrock over HTTP/1.1") {
  const std::string answer = R"({"output":{"message":{"role":"assistant","content":[{"text":"h1"}]}},)"
                             R"("stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}})";
  raw_upstream upstream({{raw_upstream::response(answer)}});
  proxy_process proxy({"--upstream", upstream.url()});
  const auto path = path_for("bedrock-converse");
  const auto got = exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body, false));
  CHECK(got.status == 200);
  REQUIRE(upstream.heads().size() == 1);
  CHECK(upstream.heads()[0].starts_with("POST " + path + " HTTP/1.1\r\n"));
  CHECK(upstream.bodies()[0] == converse_body);
}

TEST_CASE("aws over h2: an upstream that does not speak HTTP/2 fails the request with upstream_no_h2, counted") {
  mock_upstream upstream;  // HTTP/1.1 only: it answers the h2c preface with an HTTP/1.1 error
  proxy_process proxy({"--upstream", upstream.url()});
  const auto path = path_for("bedrock-converse");
  const auto got = exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body));
  INFO(got.body);
  CHECK(got.status == 502);
  CHECK(got.body.find("upstream_no_h2") != std::string::npos);
  CHECK(got.body.find(secret) == std::string::npos);
  const std::string series = R"(gistproxy_errors_total{source="upstream",type="upstream_no_h2",group="treated"})";
  CHECK(series_value(metrics_with(proxy.admin_port(), {series}), series) == 1);
}

TEST_CASE("aws over h2: to a TLS upstream the request goes with ALPN h2 and verifies") {
  test_pki pki("localhost");
  mock_upstream_h2 upstream(secret, pki.cert.string(), pki.key.string());
  proxy_process proxy({"--upstream", upstream.url(), "--upstream-ca", pki.ca.string()});
  const auto path = path_for("bedrock-converse");
  const auto answer = exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body));
  const auto seen = upstream.requests();
  REQUIRE(seen.size() == 1);
  INFO(seen[0].why);
  CHECK(seen[0].verified);
  CHECK(seen[0].field(":scheme") == "https");  // the upstream's: the client did not sign :scheme
  CHECK(answer.status == 200);
  CHECK(answer.body.find("verified over h2") != std::string::npos);
}

TEST_CASE("aws over h2: a TLS upstream that chooses no ALPN h2 fails with upstream_no_h2, nothing sent over HTTP/1.1") {
  test_pki pki("localhost");
  mock_upstream upstream({"127.0.0.1", 0, pki.cert.string(), pki.key.string()});  // TLS, HTTP/1.1 only, no ALPN
  proxy_process proxy({"--upstream", upstream.url(), "--upstream-ca", pki.ca.string()});
  const auto path = path_for("bedrock-converse");
  const auto got = exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body));
  INFO(got.body);
  CHECK(got.status == 502);
  CHECK(got.body.find("upstream_no_h2") != std::string::npos);
  CHECK(got.body.find("ALPN") != std::string::npos);
  CHECK(upstream.requests_served() == 0);
  const std::string series = R"(gistproxy_errors_total{source="upstream",type="upstream_no_h2",group="treated"})";
  CHECK(series_value(metrics_with(proxy.admin_port(), {series}), series) == 1);
}

TEST_CASE("aws over h2: a client that resets its stream mid-answer gives up the upstream HTTP/2 stream") {
  mock_upstream_h2 upstream(secret);
  proxy_process proxy({"--upstream", upstream.url()});
  const auto path = path_for("bedrock-converse", true);
  const std::string stalling = R"({"messages":[{"role":"user","content":[{"text":"stall"}]}]})";
  h2_client client(proxy.port());
  const auto stream = client.submit("POST", path, stalling, sign_over_h2(path, stalling).headers);
  // The first event reaches the client; the upstream then holds the stream open.
  REQUIRE(client.pump_until([&] { return !client.responses[stream].body.empty(); }));
  CHECK(client.responses[stream].status == 200);
  client.reset(stream);
  client.send_queued();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (upstream.cancelled() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(upstream.cancelled() == 1);
  // The proxy serves on.
  const auto next = exchange_h2(proxy.port(), path_for("bedrock-converse"), converse_body,
                                sign_over_h2(path_for("bedrock-converse"), converse_body));
  CHECK(next.status == 200);
}

TEST_CASE("aws over h2: requests signed over :authority reuse one idle HTTP/2 connection, never one the upstream ended") {
  mock_upstream_h2 upstream(secret);
  proxy_process proxy({"--upstream", upstream.url(), "--threads", "1"});  // one pool: each I/O thread has its own
  const auto path = path_for("bedrock-converse");
  for (int i = 0; i < 3; ++i) {
    CHECK(exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body)).status == 200);
    CHECK(upstream.connections() == 1);
  }
  // An upstream that ends each connection after its answer (GOAWAY): the
  // idle one carries the next request, each after it gets a fresh one, and
  // every one is answered.
  upstream.goaway_after_answer(true);
  for (int i = 0; i < 3; ++i) {
    const auto got = exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body));
    INFO(got.body);
    CHECK(got.status == 200);
  }
  CHECK(upstream.connections() == 3);
  const auto seen = upstream.requests();
  REQUIRE(seen.size() == 6);
  for (const auto& r : seen) CHECK(r.verified);
}

TEST_CASE("aws over h2: a request an idle HTTP/2 connection refuses is sent once more on a fresh one") {
  mock_upstream_h2 upstream(secret);
  proxy_process proxy({"--upstream", upstream.url(), "--threads", "1"});
  const auto path = path_for("bedrock-converse");
  CHECK(exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body)).status == 200);
  upstream.refuse_next_on_reused();
  const auto got = exchange_h2(proxy.port(), path, converse_body, sign_over_h2(path, converse_body));
  INFO(got.body);
  CHECK(got.status == 200);
  CHECK(upstream.connections() == 2);
  const auto seen = upstream.requests();
  CHECK(seen.size() == 2);  // the refused one was never processed
  const std::string retried = R"(gistproxy_upstream_connections_total{result="retried"})";
  CHECK(series_value(metrics_with(proxy.admin_port(), {retried}), retried) == 1);
}
