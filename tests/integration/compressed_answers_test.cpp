// Real APIs compress their answers when the client allows it (the Node SDKs
// send gzip, deflate; Claude Code, opencode and Cline also br and zstd). A
// compressed answer is still read: its read_blob calls are intercepted, and
// the client gets the decoded answer. The mock upstream compresses as they do.
#include <catch2/catch.hpp>

#include "tests/support/api_scenarios.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/http_compression.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;

namespace {

const std::string needle_line = "found: 2501: config line 2500: NEEDLE secret_port=48213";

std::map<std::string, std::string> with_accept(const std::string& api, const std::string& accept) {
  auto h = key_header(api);
  h["Accept-Encoding"] = accept;
  return h;
}

// A small answer that is itself a read_blob call, as the chat API writes it.
std::string chat_read_blob_call() {
  return R"({"id":"x","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant",)"
         R"("content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"read_blob",)"
         R"("arguments":"{\"handle\":\"0123456789abcdef\"}"}}]},"finish_reason":"tool_calls"}]})";
}

std::string head_line(const std::string& head, const std::string& name) {
  std::string lower = head;
  for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  auto at = lower.find("\r\n" + name + ":");
  if (at == std::string::npos) return "(none)";
  auto start = head.find_first_not_of(' ', at + name.size() + 3);
  return head.substr(start, head.find("\r\n", start) - start);
}

}  // namespace

TEST_CASE("a compressed answer to a request offering read_blob is decoded and its read_blob calls intercepted") {
  const std::string api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini");
  const std::string coding = GENERATE(as<std::string>{}, "gzip", "deflate", "br", "zstd");
  const bool stream = GENERATE(false, true);
  CAPTURE(api, coding, stream);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});

  auto req = request_for(api, "find the needle", haystack());
  if (stream && api != "gemini") req["stream"] = true;
  auto res = http_request(proxy.port(), "POST", path_for(api, stream), req.dump(), with_accept(api, coding));
  REQUIRE(res.ok());
  REQUIRE(res.status == 200);
  CHECK(res.headers.count("content-encoding") == 0);  // decoded: identity, which every client accepts
  CHECK(res.body.find("read_blob") == std::string::npos);
  if (stream) CHECK(read_stream(api, res.body).text == needle_line);
  else CHECK(answer_text(api, nlohmann::json::parse(res.body)) == needle_line);
  REQUIRE(upstream.llm_bodies().size() == 2);  // the page-in hop went upstream

  auto metrics = metrics_with(proxy.admin_port(), {"gistproxy_upstream_answers_decoded_total{coding=\"" + coding + "\"} 2"});
  CHECK(series_value(metrics, "gistproxy_upstream_answers_decoded_total{coding=\"" + coding + "\"}") == 2);
}

TEST_CASE("the upstream is asked only for codings gistproxy decodes when it must read the answer") {
  raw_upstream upstream({{raw_upstream::response(R"({"id":"x","object":"chat.completion","choices":[]})")}});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  const std::string accept = "gzip, deflate, br, zstd, compress, snappy;q=0.5";
  SECTION("offering read_blob: only what gistproxy decodes") {
    auto req = request_for("chat", "hello", "a short output");
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", req.dump(), with_accept("chat", accept)).status == 200);
    REQUIRE(upstream.heads().size() == 1);
    CHECK(head_line(upstream.heads()[0], "accept-encoding") == "gzip, deflate, br, zstd");
  }
  SECTION("a client that sends none: identity, not any coding the upstream likes") {
    auto req = request_for("chat", "hello", "a short output");
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", req.dump(), key_header("chat")).status == 200);
    REQUIRE(upstream.heads().size() == 1);
    CHECK(head_line(upstream.heads()[0], "accept-encoding") == "identity");
  }
  SECTION("not offering read_blob: the client's own field, untouched") {
    nlohmann::json req = {{"model", "gpt-4o"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", req.dump(), with_accept("chat", accept)).status == 200);
    REQUIRE(upstream.heads().size() == 1);
    CHECK(head_line(upstream.heads()[0], "accept-encoding") == accept);
  }
}

TEST_CASE("an answer in a coding gistproxy cannot read never reaches a client offered read_blob") {
  const std::string coding = GENERATE(as<std::string>{}, "compress", "gzip, br", "snappy");
  CAPTURE(coding);
  const std::string body = chat_read_blob_call();  // what the "compressed" bytes would say
  raw_upstream upstream({{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: " + coding +
                          "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body}});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  auto req = request_for("chat", "hello", "a short output");
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", req.dump(), with_accept("chat", "gzip"));
  CHECK(res.status == 502);
  CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(res.headers["x-gistproxy-error"] == "upstream_bad_response");
}

TEST_CASE("a corrupt or cut compressed answer fails as a broken upstream, never as a complete answer") {
  const std::string coding = GENERATE(as<std::string>{}, "gzip", "br", "zstd");
  CAPTURE(coding);
  SECTION("JSON, cut short inside its Content-Length") {
    auto compressed = compress(coding, R"({"id":"x","object":"chat.completion","choices":[]})");
    compressed.resize(compressed.size() - 4);
    raw_upstream upstream({{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: " + coding +
                            "\r\nContent-Length: " + std::to_string(compressed.size()) + "\r\n\r\n" + compressed}});
    proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
    auto req = request_for("chat", "hello", "a short output");
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", req.dump(), with_accept("chat", coding));
    CHECK(res.status == 502);
  }
  SECTION("SSE, cut short: the client's stream does not end as complete") {
    std::string events = "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
                         "\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n";
    auto compressed = compress(coding, events + "data: [DONE]\n\n");
    compressed.resize(compressed.size() - 4);
    raw_upstream upstream({{"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: " + coding +
                            "\r\nContent-Length: " + std::to_string(compressed.size()) + "\r\n\r\n" + compressed}});
    proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
    auto req = request_for("chat", "hello", "a short output");
    req["stream"] = true;
    auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", req.dump(), with_accept("chat", coding));
    CHECK(res.status == 200);
    CHECK(res.body.find("data: [DONE]") == std::string::npos);
    CHECK(res.body.find("gistproxy") != std::string::npos);  // the API's own error event names the failure
  }
}

TEST_CASE("a compressed answer to a request not offering read_blob reaches the client as the upstream sent it") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});
  nlohmann::json req = {{"model", "gpt-4o"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  auto res = http_request(proxy.port(), "POST", "/v1/chat/completions", req.dump(), with_accept("chat", "gzip"));
  REQUIRE(res.status == 200);
  CHECK(res.headers["content-encoding"] == "gzip");
  CHECK(res.body.substr(0, 2) == "\x1f\x8b");  // gzip's magic: not decoded, not re-encoded
}

TEST_CASE("bytes an upstream leaves after an answer never become another client's answer") {
  // What the upstream smuggles after its answer on a keep-alive connection:
  // a whole response, which a reused connection would hand the next request.
  const std::string smuggled = raw_upstream::response(R"({"answer":"someone else's"})");
  auto [name, method, first] = GENERATE_REF(table<std::string, std::string, std::string>({
      {"a 204 carrying a body", "POST", "HTTP/1.1 204 No Content\r\n\r\n" + smuggled},
      {"a 304 carrying a body", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: " +
                                           std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled},
      {"a body longer than its Content-Length", "POST",
       "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}" + smuggled},
      {"a HEAD answer with a body", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}" + smuggled},
  }));
  CAPTURE(name);
  raw_upstream upstream({{first}, {raw_upstream::response(R"({"answer":"yours"})")}});
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});

  auto a = http_request(proxy.port(), method, "/v1/files/a", method == "POST" ? "{}" : "",
                        {{"Authorization", "Bearer tenant-a"}});
  CHECK(a.ok());
  auto b = http_request(proxy.port(), "POST", "/v1/files/b", "{}", {{"Authorization", "Bearer tenant-b"}});
  CHECK(b.status == 200);
  CHECK(b.body == R"({"answer":"yours"})");
  CHECK(upstream.requests() == 2);  // the second request reached the upstream itself

  auto metrics = metrics_with(proxy.admin_port(), {"gistproxy_upstream_connections_discarded_total"});
  const double discarded =
      series_value(metrics, "gistproxy_upstream_connections_discarded_total{reason=\"leftover\"}") +
      series_value(metrics, "gistproxy_upstream_connections_discarded_total{reason=\"unframed\"}");
  CHECK(discarded == 1);
}
