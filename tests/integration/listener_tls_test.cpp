// TLS on the client listener (--tls-cert/--tls-key): curl and Python httpx
// reach the offload and page-in path over h2 (ALPN) and HTTP/1.1; the
// certificate is renewed without a restart (a file change, SIGHUP) while
// open connections keep serving; expired and mismatched files are refused;
// client certificates (--tls-client-ca); a handshake that never finishes.
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "tests/integration/harness.hpp"
#include "tests/integration/test_pki.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/tls_client.hpp"

using namespace gistproxy::testing;
namespace fs = std::filesystem;

namespace {

tls_client_options trusting(const fs::path& ca) {
  tls_client_options o;
  o.ca = ca;
  return o;
}

tls_client_options presenting(const fs::path& ca, const test_pki::issued& client) {
  auto o = trusting(ca);
  o.cert = client.cert;
  o.key = client.key;
  return o;
}

const std::string needle_answer = "found: 2501: config line 2500: NEEDLE secret_port=48213";

// The proxy serving `served.pem`/`served.key`, which a test replaces the way
// a certificate manager does (written beside, renamed over).
struct tls_stack {
  test_pki pki{"localhost"};
  test_pki::issued first = pki.issue("first", "first", 2);
  fs::path cert = pki.dir / "served.pem", key = pki.dir / "served.key";
  mock_upstream upstream;
  std::unique_ptr<proxy_process> proxy;

  explicit tls_stack(std::vector<std::string> extra = {}, bool ask_client_certificates = false) {
    install(first.cert, first.key);
    std::vector<std::string> args{"--upstream", upstream.url(), "--tls-cert", cert.string(), "--tls-key", key.string()};
    if (ask_client_certificates) args.insert(args.end(), {"--tls-client-ca", pki.ca.string()});
    args.insert(args.end(), extra.begin(), extra.end());
    proxy = std::make_unique<proxy_process>(args);
  }
  void install(const fs::path& new_cert, const fs::path& new_key) const {
    fs::copy_file(new_cert, pki.dir / "next.pem", fs::copy_options::overwrite_existing);
    fs::copy_file(new_key, pki.dir / "next.key", fs::copy_options::overwrite_existing);
    fs::rename(pki.dir / "next.key", key);
    fs::rename(pki.dir / "next.pem", cert);
  }
  // The common name a new connection is served.
  std::string served_name() const { return tls_client(proxy->port(), trusting(pki.ca)).peer_common_name(); }
  // Polls new connections until one is served `name` (true) or the deadline passes.
  bool serves(const std::string& name) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      if (served_name() == name) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

struct curl_answer {
  int exit_code = -1;
  std::string http_version, body;
};

curl_answer curl_tls(const tls_stack& s, const std::string& protocol_flag, const std::string& body) {
  const auto in = temp_path("tls-request.json"), out = temp_path("tls-response");
  std::ofstream(in) << body;
  const auto port = std::to_string(s.proxy->port());
  auto r = run_command({"curl", "-sS", protocol_flag, "--cacert", s.pki.ca.string(), "--resolve",
                        "localhost:" + port + ":127.0.0.1", "-o", out.string(), "-w", "%{http_version}", "-H",
                        "Authorization: Bearer sk-test", "-H", "content-type: application/json", "--data-binary",
                        "@" + in.string(), "https://localhost:" + port + "/v1/chat/completions"});
  curl_answer c{r.exit_code, r.output, {}};
  std::ifstream f(out);
  c.body.assign(std::istreambuf_iterator<char>(f), {});
  return c;
}

std::string chat_text(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  return j.is_object() ? answer_text("chat", j) : "";
}

const std::string small_chat = R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})";

}  // namespace

TEST_CASE("over TLS curl gets h2 by ALPN and http/1.1 and both offload and page back in") {
  tls_stack s;
  const auto body = request_for("chat", "find the needle", haystack()).dump();
  auto h2 = curl_tls(s, "--http2", body);
  REQUIRE(h2.exit_code == 0);
  CHECK(h2.http_version == "2");
  CHECK(chat_text(h2.body) == needle_answer);
  auto h1 = curl_tls(s, "--http1.1", body);
  REQUIRE(h1.exit_code == 0);
  CHECK(h1.http_version == "1.1");
  CHECK(chat_text(h1.body) == needle_answer);
  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 4);  // each: the offloaded request, then its page-in hop
  CHECK(seen[0].find("NEEDLE secret_port=48213") == std::string::npos);
  CHECK(seen[1].find("NEEDLE secret_port=48213") != std::string::npos);
  auto metrics = metrics_with(s.proxy->admin_port(), {R"(gistproxy_tls_handshakes_total{result="ok"} 2)"});
  CHECK(metrics.find(R"(gistproxy_tls_handshakes_total{result="ok"} 2)") != std::string::npos);
  CHECK(series_value(metrics, "gistproxy_tls_certificate_expiry_timestamp_seconds") > 0);
  const auto log = s.proxy->log();
  CHECK(log.find(R"("protocol":"HTTP/2","path":"/v1/chat/completions")") != std::string::npos);
  CHECK(log.find(R"("protocol":"HTTP/1.1","path":"/v1/chat/completions")") != std::string::npos);
}

TEST_CASE("Python httpx with HTTP/2 over TLS pages in a plain and a streamed answer on one connection") {
  tls_stack s;
  const auto in = temp_path("httpx-request.json");
  std::ofstream(in) << request_for("chat", "find the needle", haystack()).dump();
  const std::string script = std::string(GISTPROXY_FIXTURES) + "/../support/httpx_client.py";
  // Debian's interpreter, which scripts/install-deps gives python3-httpx and python3-h2.
  auto r = run_command({"/usr/bin/python3", script, "https://localhost:" + std::to_string(s.proxy->port()) +
                                                        "/v1/chat/completions", s.pki.ca.string(), in.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto out = nlohmann::json::parse(r.output, nullptr, false);
  REQUIRE(out.is_object());
  CHECK(out["plain"]["http_version"] == "HTTP/2");
  CHECK(out["plain"]["status"] == 200);
  CHECK(chat_text(out["plain"]["body"].get<std::string>()) == needle_answer);
  CHECK(out["stream"]["http_version"] == "HTTP/2");
  CHECK(read_stream("chat", out["stream"]["body"].get<std::string>()).text == needle_answer);
  CHECK(s.upstream.llm_bodies().size() == 4);
  // One connection carried both: one handshake.
  auto metrics = metrics_with(s.proxy->admin_port(), {R"(gistproxy_h2_streams_total 2)"});
  CHECK(series_value(metrics, R"(gistproxy_tls_handshakes_total{result="ok"})") == 1);
}

TEST_CASE("a renewed certificate reaches new connections while an open connection keeps serving") {
  SECTION("noticed as a file change") {
    tls_stack s({"--tls-reload-interval", "100ms"});
    tls_client open(s.proxy->port(), trusting(s.pki.ca));
    REQUIRE(open.handshake_error().empty());
    CHECK(open.peer_common_name() == "first");
    CHECK(open.request("POST", "/v1/chat/completions", small_chat).status == 200);
    auto second = s.pki.issue("second", "second", 2);
    s.install(second.cert, second.key);
    CHECK(s.serves("second"));
    auto again = open.request("POST", "/v1/chat/completions", small_chat);
    CHECK(again.ok());
    CHECK(again.status == 200);
    auto metrics = metrics_with(s.proxy->admin_port(), {R"(gistproxy_tls_reloads_total{result="ok"})"});
    CHECK(series_value(metrics, R"(gistproxy_tls_reloads_total{result="ok"})") >= 1);
  }
  SECTION("on SIGHUP, and only then with --tls-reload-interval 0") {
    tls_stack s({"--tls-reload-interval", "0"});
    auto second = s.pki.issue("second", "second", 2);
    s.install(second.cert, second.key);
    CHECK(s.served_name() == "first");  // nothing looks at the files
    REQUIRE(::kill(s.proxy->pid(), SIGHUP) == 0);
    CHECK(s.serves("second"));
  }
}

TEST_CASE("a TLS client that closes without close_notify between requests is no malformed request") {
  tls_stack s;
  {
    tls_client c(s.proxy->port(), trusting(s.pki.ca));
    CHECK(c.request("POST", "/v1/chat/completions", small_chat).status == 200);
  }  // closes the TCP connection without a TLS close_notify, as most clients do
  // The session's end is the sync point: a 400 for it would be logged before.
  auto metrics = metrics_with(s.proxy->admin_port(), {"gistproxy_active_connections 0"});
  REQUIRE(metrics.find("gistproxy_active_connections 0") != std::string::npos);
  CHECK(s.proxy->log().find(R"("status":400)") == std::string::npos);
  CHECK(series_value(metrics, R"(gistproxy_requests_total{api="chat",status="200",group="treated",protocol="HTTP/1.1"})") ==
        1);
}

TEST_CASE("an expired certificate or another certificate's key is refused at start and at a reload") {
  tls_stack s({"--tls-reload-interval", "0"});
  const auto expired = s.pki.issue("expired", "expired", -1);
  const auto second = s.pki.issue("second", "second", 2);
  auto start_with = [&](const fs::path& cert, const fs::path& key) {
    return run_command({gistproxy_binary(), "serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
                        "--upstream", s.upstream.url(), "--store", temp_path("tls-refused-store").string(),
                        "--tls-cert", cert.string(), "--tls-key", key.string()});
  };
  auto at_start = start_with(expired.cert, expired.key);
  CHECK(at_start.exit_code != 0);
  CHECK(at_start.output.find("the certificate has expired") != std::string::npos);
  at_start = start_with(s.first.cert, second.key);
  CHECK(at_start.exit_code != 0);
  CHECK(at_start.output.find("--tls-key") != std::string::npos);

  s.install(expired.cert, expired.key);
  REQUIRE(::kill(s.proxy->pid(), SIGHUP) == 0);
  metrics_with(s.proxy->admin_port(), {R"(gistproxy_tls_reloads_total{result="refused"} 1)"});
  CHECK(s.served_name() == "first");
  s.install(s.first.cert, second.key);
  REQUIRE(::kill(s.proxy->pid(), SIGHUP) == 0);
  auto metrics = metrics_with(s.proxy->admin_port(), {R"(gistproxy_tls_reloads_total{result="refused"} 2)"});
  CHECK(metrics.find(R"(gistproxy_tls_reloads_total{result="refused"} 2)") != std::string::npos);
  CHECK(s.served_name() == "first");
  CHECK(s.proxy->log().find("TLS reload refused") != std::string::npos);
}

TEST_CASE("with --tls-client-ca only clients holding a certificate from that CA are served") {
  tls_stack s({}, true);
  const auto agent = s.pki.issue("agent", "agent-1", 2, "extendedKeyUsage=clientAuth");
  test_pki elsewhere("elsewhere");
  const auto stranger = elsewhere.issue("stranger", "stranger", 2, "extendedKeyUsage=clientAuth");

  tls_client with_cert(s.proxy->port(), presenting(s.pki.ca, agent));
  REQUIRE(with_cert.handshake_error().empty());
  auto served = with_cert.request("POST", "/v1/chat/completions", small_chat);
  INFO(served.error);
  CHECK(served.status == 200);
  CHECK(series_value(metrics_with(s.proxy->admin_port(), {}), R"(gistproxy_tls_handshakes_total{result="ok"})") == 1);
  // Under TLS 1.3 the client's handshake ends before the server checks its
  // certificate: the refusal arrives as an alert on the first read.
  tls_client without(s.proxy->port(), trusting(s.pki.ca));
  CHECK_FALSE(without.request("POST", "/v1/chat/completions", small_chat).ok());
  tls_client foreign(s.proxy->port(), presenting(s.pki.ca, stranger));
  CHECK_FALSE(foreign.request("POST", "/v1/chat/completions", small_chat).ok());
  auto metrics = metrics_with(s.proxy->admin_port(), {R"(gistproxy_tls_handshakes_total{result="client_certificate"} 2)"});
  CHECK(metrics.find(R"(gistproxy_tls_handshakes_total{result="client_certificate"} 2)") != std::string::npos);
}

TEST_CASE("a TLS handshake that never finishes is closed at --client-timeout and counted") {
  tls_stack s({"--client-timeout", "1s"});
  raw_exchange(s.proxy->port(), "", std::chrono::seconds(20));  // returns when the proxy closes
  auto metrics = metrics_with(s.proxy->admin_port(), {R"(gistproxy_tls_handshakes_total{result="timeout"} 1)",
                                                      "gistproxy_active_connections 0"});
  CHECK(metrics.find(R"(gistproxy_tls_handshakes_total{result="timeout"} 1)") != std::string::npos);
  CHECK(metrics.find("gistproxy_active_connections 0") != std::string::npos);
}
