// The real binary behind an outbound HTTP proxy (tests/support/connect_proxy):
// CONNECT tunnels to plain and TLS upstreams and to the S3 store, refusals,
// credentials, dropped tunnels, NO_PROXY, and credentials kept out of logs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "rewrite/offload/base64.hpp"
#include "tests/integration/harness.hpp"
#include "tests/integration/test_pki.hpp"
#include "tests/support/connect_proxy.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;

namespace {

const std::string chat_body = R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})";

nlohmann::json error_of(const http_result& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  return j.is_object() && j.contains("error") ? j["error"] : nlohmann::json::object();
}

std::string message_of(const http_result& r) { return error_of(r).value("message", ""); }

std::string at(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// Upstream spans that name this egress proxy, once at least `count` are in the log.
std::size_t tunnelled_spans(const std::filesystem::path& spans, const connect_proxy& egress, std::size_t count) {
  auto is_tunnelled = [name = at(egress.port())](const nlohmann::json& s) {
    return s["attributes"].value("gistproxy.egress_proxy", "") == name;
  };
  auto all = read_spans_until(spans, [&](const auto& s) {
    return std::size_t(std::count_if(s.begin(), s.end(), is_tunnelled)) >= count;
  });
  return std::size_t(std::count_if(all.begin(), all.end(), is_tunnelled));
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A chat request whose tool output (100 KB) the proxy offloads.
std::string offloadable_chat() {
  std::string output;
  for (int i = 0; output.size() < 100 * 1024; ++i) output += "line " + std::to_string(i) + ": status=ok\n";
  nlohmann::json body = {
      {"model", "gpt-4o"},
      {"messages", {{{"role", "user"}, {"content", "check"}},
                    {{"role", "assistant"},
                     {"tool_calls", {{{"id", "c1"}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}},
                    {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", output}}}},
      {"tools", {{{"type", "function"}, {"function", {{"name", "run"}}}}}}};
  return body.dump();
}

}  // namespace

TEST_CASE("an http upstream is reached through a CONNECT tunnel of --egress-proxy, kept alive between requests") {
  mock_upstream upstream;
  connect_proxy egress;
  auto spans = temp_path("spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--egress-proxy", egress.url(), "--threads", "1", "--span-log",
                       spans.string()});
  CHECK(proxy.log().find("\"msg\":\"egress proxy\"") != std::string::npos);

  auto chat = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
  REQUIRE(chat.ok());
  CHECK(chat.status == 200);
  CHECK(chat.body.find("Hello from the mock.") != std::string::npos);
  auto echo = http_request(proxy.port(), "GET", "/echo");
  REQUIRE(echo.status == 200);
  auto seen = nlohmann::json::parse(echo.body);
  CHECK(seen["target"] == "/echo");  // origin-form inside the tunnel, as to the upstream itself
  CHECK(seen["headers"]["Host"] == at(upstream.port()));
  CHECK_FALSE(seen["headers"].contains("Proxy-Authorization"));

  CHECK(egress.tunnels() == 1);  // the second request went through the same tunnel
  CHECK(egress.targets() == std::vector<std::string>{at(upstream.port())});
  CHECK(egress.authorizations() == std::vector<std::string>{""});
  CHECK(upstream.connections_accepted() == 1);
  CHECK(tunnelled_spans(spans, egress, 2) == 2);  // each upstream span names the egress proxy
}

TEST_CASE("an https upstream is reached through the tunnel with TLS verified end to end against its own name") {
  connect_proxy egress;
  SECTION("a certificate for the upstream's name: proxied, and the CONNECT names that host") {
    test_pki pki("localhost");
    mock_upstream upstream({"127.0.0.1", 0, pki.cert.string(), pki.key.string()});
    proxy_process proxy({"--upstream", upstream.url(), "--upstream-ca", pki.ca.string(), "--egress-proxy", egress.url()});
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
    REQUIRE(res.ok());
    CHECK(res.status == 200);
    CHECK(res.body.find("Hello from the mock.") != std::string::npos);
    CHECK(egress.targets() == std::vector<std::string>{"localhost:" + std::to_string(upstream.port())});
  }
  SECTION("a certificate for another name is refused through the tunnel as it is directly") {
    test_pki other("not-this-host.example");
    mock_upstream impostor({"127.0.0.1", 0, other.cert.string(), other.key.string()});
    proxy_process proxy({"--upstream", impostor.url(), "--upstream-ca", other.ca.string(), "--egress-proxy", egress.url()});
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
    REQUIRE(res.ok());
    CHECK(res.status == 502);
    CHECK(error_of(res)["type"] == "upstream_tls");
    CHECK(egress.tunnels() == 1);  // the tunnel opened; TLS with the upstream refused it
    CHECK(impostor.requests_served() == 0);
  }
}

TEST_CASE("a proxy that refuses CONNECT gives the client a 502 naming the egress proxy, counted as an upstream error") {
  mock_upstream upstream;
  connect_proxy egress(connect_proxy_options::refusing(403));
  proxy_process proxy({"--upstream", upstream.url(), "--egress-proxy", egress.url()});
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
  REQUIRE(res.ok());
  CHECK(res.status == 502);
  CHECK(res.headers["x-gistproxy-error"] == "upstream_unreachable");
  CHECK(error_of(res)["type"] == "upstream_unreachable");
  CHECK(message_of(res).find("egress proxy " + at(egress.port()) + " refused CONNECT (HTTP 403)") != std::string::npos);
  CHECK(egress.targets().size() == 1);
  CHECK(upstream.connections_accepted() == 0);
  const std::string series = "source=\"upstream\",type=\"upstream_unreachable\",group=\"treated\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {series}).find(series) != std::string::npos);
}

TEST_CASE("a proxy that never answers CONNECT gives a 504 within --connect-timeout") {
  mock_upstream upstream;
  connect_proxy egress(connect_proxy_options::never_answering());
  proxy_process proxy({"--upstream", upstream.url(), "--egress-proxy", egress.url(), "--connect-timeout", "300ms"});
  const auto started = std::chrono::steady_clock::now();
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  REQUIRE(res.ok());
  CHECK(res.status == 504);
  CHECK(error_of(res)["type"] == "upstream_timeout");
  CHECK(message_of(res).find("egress proxy " + at(egress.port()) + " did not answer CONNECT in time") !=
        std::string::npos);
  CHECK(elapsed < std::chrono::milliseconds(2500));
  CHECK(egress.targets().size() == 1);  // the CONNECT was sent; the proxy sat on it
}

TEST_CASE("a proxy that requires authentication: 407 without credentials, a tunnel with user:password from the URL") {
  mock_upstream upstream;
  connect_proxy egress(connect_proxy_options::requiring("Basic YWxpY2U6czNjckB0"));  // alice:s3cr@t
  SECTION("no credentials: a clear 502") {
    proxy_process proxy({"--upstream", upstream.url(), "--egress-proxy", egress.url()});
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
    CHECK(res.status == 502);
    CHECK(message_of(res).find("egress proxy " + at(egress.port()) + " requires authentication (HTTP 407)") !=
          std::string::npos);
    CHECK(egress.authorizations() == std::vector<std::string>{""});
    CHECK(egress.tunnels() == 0);
  }
  SECTION("credentials from the URL, percent-decoded, open the tunnel") {
    proxy_process proxy({"--upstream", upstream.url(), "--egress-proxy", egress.url_with("alice:s3cr%40t")});
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
    CHECK(res.status == 200);
    CHECK(egress.authorizations() == std::vector<std::string>{"Basic YWxpY2U6czNjckB0"});
    CHECK(egress.tunnels() == 1);
  }
  SECTION("wrong credentials: the 502 says they were refused") {
    proxy_process proxy({"--upstream", upstream.url(), "--egress-proxy", egress.url_with("alice:wrong")});
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
    CHECK(res.status == 502);
    CHECK(message_of(res).find("refused the credentials") != std::string::npos);
    CHECK(egress.tunnels() == 0);
  }
}

TEST_CASE("a proxy that drops a tunnel mid-request: that request gets a 502, the next is served") {
  mock_upstream upstream;
  connect_proxy egress(connect_proxy_options::dropping(1));
  proxy_process proxy({"--upstream", upstream.url(), "--egress-proxy", egress.url(), "--threads", "1"});
  auto dropped = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
  REQUIRE(dropped.ok());
  CHECK(dropped.status == 502);
  CHECK(error_of(dropped)["type"] == "upstream_reset");
  auto next = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
  REQUIRE(next.ok());
  CHECK(next.status == 200);
  CHECK(egress.tunnels() == 2);
  CHECK(upstream.requests_served() == 1);  // the dropped request never reached the upstream
}

TEST_CASE("the environment's HTTP_PROXY and NO_PROXY route upstreams as curl would, and --egress-proxy none wins") {
  struct row {
    std::vector<std::string> env;   // {proxy} and {port}: the egress proxy's URL and the upstream's port
    std::vector<std::string> args;
    bool tunnelled;
  };
  auto r = GENERATE(values<row>({
      {{"HTTP_PROXY={proxy}"}, {}, true},
      {{"http_proxy={proxy}"}, {}, true},
      {{"HTTP_PROXY={proxy}", "NO_PROXY=127.0.0.1"}, {}, false},
      {{"HTTP_PROXY={proxy}", "no_proxy=localhost, 127.0.0.1:{port}"}, {}, false},
      {{"HTTP_PROXY={proxy}", "NO_PROXY=127.0.0.1:1"}, {}, true},  // another port
      {{"HTTP_PROXY={proxy}", "NO_PROXY=127.0.0.0/8"}, {}, false},
      {{"HTTP_PROXY={proxy}", "NO_PROXY=*"}, {}, false},
      {{"HTTP_PROXY={proxy}", "NO_PROXY=localhost"}, {}, true},  // no resolving: 127.0.0.1 is not "localhost"
      {{"HTTPS_PROXY={proxy}"}, {}, false},                        // for https upstreams only
      {{"HTTP_PROXY={proxy}"}, {"--egress-proxy", "none"}, false},
      {{"NO_PROXY=127.0.0.1"}, {"--egress-proxy", "{proxy}"}, false},  // NO_PROXY applies to the flag too (curl)
  }));
  mock_upstream upstream;
  connect_proxy egress;
  const std::vector<std::pair<std::string, std::string>> placeholders = {{"{proxy}", egress.url()},
                                                                         {"{port}", std::to_string(upstream.port())}};
  auto fill = [&](std::string s) {
    for (const auto& [key, value] : placeholders)
      if (auto pos = s.find(key); pos != std::string::npos) s.replace(pos, key.size(), value);
    return s;
  };
  std::vector<std::string> env, args{"--upstream", upstream.url()};
  std::transform(r.env.begin(), r.env.end(), std::back_inserter(env), fill);
  std::transform(r.args.begin(), r.args.end(), std::back_inserter(args), fill);
  CAPTURE(env, args);
  proxy_process proxy(args, env);
  auto res = http_request(proxy.port(), "GET", "/echo");
  REQUIRE(res.ok());
  CHECK(res.status == 200);
  CHECK(egress.tunnels() == (r.tunnelled ? 1u : 0u));
  CHECK(egress.connections() == (r.tunnelled ? 1u : 0u));
}

TEST_CASE("the egress proxy's credentials appear in no log line, span, error or startup message") {
  mock_upstream upstream;
  const std::string password = "hunter2-do-not-log";
  const std::string encoded = gistproxy::rewrite::base64_encode("alice:" + password);
  connect_proxy accepting(connect_proxy_options::requiring("Basic " + encoded));
  connect_proxy refusing(connect_proxy_options::requiring("Basic bm9ib2R5OmVsc2U="));
  auto spans = temp_path("spans.jsonl");
  for (auto* egress : {&accepting, &refusing}) {
    proxy_process proxy({"--upstream", upstream.url(), "--egress-proxy", egress->url_with("alice:" + password),
                         "--span-log", spans.string(), "--log-level", "debug"});
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
    CHECK(res.status == (egress == &accepting ? 200 : 502));
    CHECK(res.body.find(password) == std::string::npos);
    CHECK(res.body.find(encoded) == std::string::npos);
    CHECK(tunnelled_spans(spans, *egress, 1) == 1);
    proxy.stop();  // everything it will ever log is written
    const auto log = proxy.log();
    CHECK(log.find("\"proxy\":\"" + at(egress->port()) + "\"") != std::string::npos);  // it is named, by host:port
    CHECK(log.find(password) == std::string::npos);
    CHECK(log.find(encoded) == std::string::npos);
  }
  const auto span_log = read_file(spans);
  CHECK(span_log.find(password) == std::string::npos);
  CHECK(span_log.find(encoded) == std::string::npos);

  // A proxy URL that cannot be used stops the start, without showing the password.
  for (const auto& [args, env] : std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>>{
           {{"--upstream", upstream.url(), "--egress-proxy", "socks5://alice:" + password + "@127.0.0.1:1"}, {}},
           {{"--upstream", upstream.url()}, {"HTTP_PROXY=socks5://alice:" + password + "@127.0.0.1:1"}}}) {
    std::string failure;
    try {
      proxy_process refused(args, env);
    } catch (const std::runtime_error& e) {
      failure = e.what();
    }
    CAPTURE(failure);
    CHECK(failure.find("only http:// egress proxies") != std::string::npos);
    CHECK(failure.find(password) == std::string::npos);
  }
}

TEST_CASE("the S3 store is reached through the egress proxy's tunnel, even at a name only the proxy resolves") {
  mock_upstream upstream;
  raw_upstream s3({{raw_upstream::response("", "application/xml")}});  // every S3 call: 200
  const std::string endpoint = "http://s3.egress-test.invalid:" + std::to_string(s3.port());
  const std::vector<std::string> aws = {"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=not-a-secret"};
  const std::vector<std::string> store = {"--store", "s3://bucket/gp", "--s3-endpoint", endpoint};

  SECTION("HeadBucket at start and an offload's PUT go through the tunnel") {
    connect_proxy egress(connect_proxy_options::resolving_all_to("127.0.0.1"));
    std::vector<std::string> args{"--upstream", upstream.url(), "--egress-proxy", egress.url()};
    args.insert(args.end(), store.begin(), store.end());
    proxy_process proxy(args, aws);
    CHECK(proxy.log().find("S3 unreachable") == std::string::npos);
    auto targets = egress.targets();
    CHECK(std::count(targets.begin(), targets.end(), "s3.egress-test.invalid:" + std::to_string(s3.port())) >= 1);
    REQUIRE(s3.requests() >= 1);
    CHECK(s3.heads().front().rfind("HEAD /bucket/ HTTP/1.1", 0) == 0);

    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", offloadable_chat());
    CHECK(res.status == 200);
    REQUIRE(upstream.llm_bodies().size() == 1);
    CHECK(upstream.llm_bodies().front().find("read_blob(") != std::string::npos);  // offloaded: the PUT succeeded
    auto heads = s3.heads();
    CHECK(std::any_of(heads.begin(), heads.end(), [](const std::string& h) { return h.rfind("PUT /bucket/gp/", 0) == 0; }));
  }
  SECTION("a proxy that refuses: the start warns that S3 is unreachable and why, and serving goes on") {
    connect_proxy egress(connect_proxy_options::refusing(403));
    std::vector<std::string> args{"--upstream", upstream.url(), "--egress-proxy", egress.url()};
    args.insert(args.end(), store.begin(), store.end());
    proxy_process proxy(args, aws);
    CHECK(proxy.log().find("S3 unreachable: egress proxy " + at(egress.port()) + " refused CONNECT (HTTP 403)") !=
          std::string::npos);
    CHECK(s3.requests() == 0);
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_body);
    CHECK(res.status == 502);  // the LLM upstream goes through the same refusing proxy
  }
}
