// The real binary against hostile clients and upstreams: nothing a client or
// an upstream sends may crash, wedge or fail-close the proxy.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>

#include "rewrite/offload/engine.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;

namespace {

// A socket connected to the proxy, for clients that misbehave on purpose.
struct raw_client {
  int fd = -1;
  explicit raw_client(std::uint16_t port) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~raw_client() { ::close(fd); }
  void send(const std::string& bytes) const {
    REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size()));
  }
  // Everything until the peer closes (bounded).
  std::string read_all(std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    timeval tv{long(timeout.count() / 1000), long(timeout.count() % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, std::size_t(n));
    return out;
  }
};

long rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

bool healthy(const proxy_process& proxy) {
  auto r = http_request(proxy.admin_port(), "GET", "/healthz");
  return r.ok() && r.status == 200;
}

// A chat request that declares tools: read_blob joins them, so the proxy
// reads (and intercepts) the answer.
std::string chat_request(bool stream = false) {
  return nlohmann::json{{"model", "gpt-4o"},
                        {"stream", stream},
                        {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                        {"tools", {{{"type", "function"}, {"function", {{"name", "run"}}}}}}}
      .dump();
}

}  // namespace

TEST_CASE("a client that stalls mid-body is cut off at --client-timeout, counted, and the proxy keeps serving") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--client-timeout", "300ms"});
  raw_client stalled(proxy.port());
  stalled.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + std::string(40000, 'x'));
  // The deadline closes the connection (no response can follow a read the
  // deadline cut); what matters is that the process survives it.
  auto answer = stalled.read_all();
  CHECK(answer.find("HTTP/1.1 200") == std::string::npos);
  CHECK(healthy(proxy));
  auto metrics = metrics_with(proxy.admin_port(), {"type=\"request_timeout\",group=\"treated\"} 1"});
  CHECK(metrics.find("gistproxy_errors_total{source=\"downstream\",type=\"request_timeout\",group=\"treated\"} 1") != std::string::npos);
  auto next = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_request());
  CHECK(next.status == 200);
  CHECK(upstream.requests_served() == 1);
}

TEST_CASE("idle clients that declare 64 MiB bodies cost memory only for the bytes they sent") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--max-body", "64MiB", "--client-timeout", "30s"});
  REQUIRE(healthy(proxy));
  const long before = rss_kib(proxy.pid());
  std::vector<std::unique_ptr<raw_client>> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(std::make_unique<raw_client>(proxy.port()));
    idle.back()->send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n" +
                      std::string(64 * 1024, 'x'));
  }
  // Watch the proxy for a second while it holds them: the old reader
  // allocated (and zeroed) every declared length at once: 512 MiB.
  long peak = before;
  for (int i = 0; i < 20; ++i) {
    peak = std::max(peak, rss_kib(proxy.pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(peak - before < 64 * 1024);
  CHECK(healthy(proxy));
}

TEST_CASE("a Transfer-Encoding other than exactly chunked is refused and its body never becomes a request") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  const std::string smuggled = "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n";
  auto coding = GENERATE(as<std::string>{}, "gzip", "gzip, chunked", "chunked, gzip", "identity");
  INFO(coding);
  auto raw = raw_exchange(proxy.port(), "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + coding +
                                            "\r\n\r\n" + smuggled);
  CHECK(raw.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(raw.find("HTTP/1.1 200") == std::string::npos);
  CHECK(upstream.requests_served() == 0);
}

TEST_CASE("chunked trailer fields are not forwarded upstream as headers") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto raw = raw_exchange(proxy.port(),
                          "POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "5\r\nhello\r\n0\r\nX-Trailer-Evil: 1\r\nAuthorization: Bearer stolen\r\n\r\n");
  REQUIRE(raw.rfind("HTTP/1.1 200", 0) == 0);
  auto echo = nlohmann::json::parse(raw.substr(raw.find("\r\n\r\n") + 4), nullptr, false);
  REQUIRE(echo.is_object());
  CHECK_FALSE(echo["headers"].contains("x-trailer-evil"));
  CHECK_FALSE(echo["headers"].contains("authorization"));
  CHECK(echo["body_size"] == 5);
}

TEST_CASE("an upstream answer of unexpected JSON types reaches the client byte for byte, never a 500") {
  auto body = GENERATE(as<std::string>{},
                       R"({"choices":[{"message":null}],"usage":{"prompt_tokens":null,"completion_tokens":"3"}})",
                       R"({"choices":["x"],"usage":"none"})", R"({"choices":[{"message":{"tool_calls":"x"}}]})",
                       R"({"choices":[{"message":{"tool_calls":[null,7,{"function":null}]}}]})",
                       std::string(100000, '[') + std::string(100000, ']'), R"({"usage":{"prompt_tokens":1e400}})");
  auto offload = GENERATE(as<std::string>{}, "on", "off");
  INFO(offload << ": " << body.substr(0, 80));
  raw_upstream upstream({{raw_upstream::response(body)}});
  proxy_process proxy({"--upstream", upstream.url(), "--offload", offload});
  auto r = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_request());
  REQUIRE(r.ok());
  CHECK(r.status == 200);
  CHECK(r.body == body);
  CHECK(healthy(proxy));
}

TEST_CASE("a stream event of an unexpected shape passes through and the stream still ends") {
  std::string sse = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
                    "data: {\"choices\":[\"x\"]}\n\n"
                    "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                    "data: [DONE]\n\n";
  raw_upstream upstream({{raw_upstream::response(sse, "text/event-stream")}});
  proxy_process proxy({"--upstream", upstream.url()});
  auto r = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_request(true));
  REQUIRE(r.ok());
  CHECK(r.status == 200);
  CHECK(r.body.find("{\"choices\":[\"x\"]}") != std::string::npos);
  CHECK(r.body.find("[DONE]") != std::string::npos);
}

TEST_CASE("a POST sent whole on a reused connection that then closes is not sent again") {
  raw_upstream upstream({{raw_upstream::response(R"({"ok":1})")}, {"", true}});
  proxy_process proxy({"--upstream", upstream.url(), "--offload", "off"});
  http_connection client(proxy.port());
  CHECK(client.request("POST", "/v1/chat/completions", "{}").status == 200);
  auto second = client.request("POST", "/v1/chat/completions", "{}");
  CHECK(second.status == 502);
  CHECK(upstream.requests() == 2);  // the old retry made it 3: the call billed twice
}

TEST_CASE("when the model ignores the last hop's tool_choice, the client never sees a read_blob call") {
  std::string call = R"({"id":"x","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls",
    "message":{"role":"assistant","content":"checking","tool_calls":[{"id":"c9","type":"function",
    "function":{"name":"read_blob","arguments":"{\"handle\":\"0123456789abcdef\"}"}}]}}],
    "usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}})";
  raw_upstream upstream({{raw_upstream::response(call)}});
  proxy_process proxy({"--upstream", upstream.url(), "--max-page-in-hops", "1", "--inject-read-blob", "always"});
  auto r = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_request());
  REQUIRE(r.status == 200);
  auto answer = nlohmann::json::parse(r.body);
  CHECK(r.body.find("read_blob") == std::string::npos);
  CHECK(answer["choices"][0]["finish_reason"] == "stop");
  CHECK(answer["choices"][0]["message"]["content"] == "checking");
  CHECK(answer["usage"]["prompt_tokens"] == 20);  // both hops
  CHECK(upstream.requests() == 2);
}

TEST_CASE("an empty Authorization beside x-api-key keeps the request in the key's tenant, and blob get finds it by the bare key") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--threshold-tokens", "100"});
  std::string output;
  while (output.size() < 20000) output += "build log line " + std::to_string(output.size()) + "\n";
  auto body = nlohmann::json{{"model", "claude-sonnet-4-5"},
                             {"max_tokens", 10},
                             {"messages", {{{"role", "user"}, {"content", "go"}},
                                           {{"role", "assistant"}, {"content", {{{"type", "tool_use"}, {"id", "t1"}, {"name", "make"}, {"input", nlohmann::json::object()}}}}},
                                           {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", output}}}}}}}};
  SECTION("empty Authorization, x-api-key") {
    auto r = http_request(proxy.port(), "POST", "/v1/messages", body.dump(), {{"authorization", ""}, {"x-api-key", "sk-ant-test"}});
    REQUIRE(r.status == 200);
    CHECK(std::filesystem::exists(proxy.store_dir() / gistproxy::rewrite::tenant_of("sk-ant-test")));
    CHECK_FALSE(std::filesystem::exists(proxy.store_dir() / "anonymous"));
  }
  SECTION("Bearer key, read back with the bare key") {
    auto r = http_request(proxy.port(), "POST", "/v1/messages", body.dump(), {{"authorization", "Bearer sk-proj-test"}});
    REQUIRE(r.status == 200);
    auto hash = gistproxy::rewrite::tenant_of("Bearer sk-proj-test");
    std::string handle;
    for (auto& e : std::filesystem::recursive_directory_iterator(proxy.store_dir() / hash))
      if (e.path().extension() == ".blob") handle = e.path().stem().string();
    REQUIRE(handle.size() == 64);
    auto got = run_command({gistproxy_binary(), "blob", "get", handle.substr(0, 16), "--store", proxy.store_dir().string(),
                            "--api-key", "sk-proj-test"});
    CHECK(got.exit_code == 0);
    CHECK(got.output == output);
  }
}

TEST_CASE("an HTTP/1.0 client gets a spliced stream close-delimited, never chunked framing it cannot read") {
  std::string sse = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"}}]}\n\n"
                    "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                    "data: [DONE]\n\n";
  raw_upstream upstream({{raw_upstream::response(sse, "text/event-stream")}});
  proxy_process proxy({"--upstream", upstream.url()});
  auto body = chat_request(true);
  auto raw = raw_exchange(proxy.port(), "POST /v1/chat/completions HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
                                        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  REQUIRE(raw.rfind("HTTP/1.0 200", 0) == 0);
  auto head = raw.substr(0, raw.find("\r\n\r\n"));
  CHECK(head.find("chunked") == std::string::npos);
  auto payload = raw.substr(raw.find("\r\n\r\n") + 4);
  CHECK(payload.rfind("data: ", 0) == 0);  // no chunk-size line
  CHECK(payload.find("hello") != std::string::npos);
  CHECK(payload.find("data: [DONE]\n\n") != std::string::npos);
}

TEST_CASE("a stream event larger than any API sends switches the spliced stream to pass-through, counted") {
  std::string big(17u << 20, 'x');
  std::string sse = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + big + "\"}}]}\n\n"
                    "data: [DONE]\n\n";
  raw_upstream upstream({{raw_upstream::response(sse, "text/event-stream")}});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  auto r = http_request(proxy.port(), "POST", "/v1/chat/completions", chat_request(true), {}, std::chrono::seconds(60));
  REQUIRE(r.ok());
  CHECK(r.status == 200);
  CHECK(r.body.find(big) != std::string::npos);
  CHECK(r.body.ends_with("data: [DONE]\n\n"));
  auto metrics = metrics_with(proxy.admin_port(), {"reason=\"stream_unparsed\"} 1"});
  CHECK(metrics.find("gistproxy_rewrite_failures_total{api=\"chat\",reason=\"stream_unparsed\"} 1") != std::string::npos);
}
