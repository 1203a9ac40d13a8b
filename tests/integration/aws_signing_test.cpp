// Bedrock's SigV4 modes on the wire (proxy/exchange/aws_signing.hpp), through
// the real binary against a byte-exact upstream: a request gistproxy signs
// carries one identity, gistproxy's; a blank Authorization never reaches the
// upstream and a doubled one is refused; a presigned query keeps its bytes
// however its names are encoded, and so does a SigV4a signature; an access
// key names one tenant however it signs, a session token one of its own.
#include <catch2/catch.hpp>

#include "rewrite/offload/engine.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;

namespace {

const std::string answer = R"({"id":"msg_1","type":"message","role":"assistant","model":"m",)"
                           R"("content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",)"
                           R"("usage":{"input_tokens":1,"output_tokens":1}})";

std::string lowercase(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The values of every `name` field line of a raw request head, in order.
std::vector<std::string> fields_named(const std::string& head, const std::string& name) {
  std::vector<std::string> out;
  const std::string lower = lowercase(head);
  for (auto at = lower.find("\r\n" + name + ":"); at != std::string::npos; at = lower.find("\r\n" + name + ":", at + 2)) {
    auto start = at + name.size() + 3;
    while (start < head.size() && head[start] == ' ') ++start;
    out.push_back(head.substr(start, head.find("\r\n", start) - start));
  }
  return out;
}

// A Bedrock InvokeModel request as raw bytes, so fields may repeat.
std::string raw_request(const std::string& target, const std::vector<std::string>& fields, const std::string& body) {
  std::string out = "POST " + target + " HTTP/1.1\r\nHost: bedrock-runtime.us-east-1.amazonaws.com\r\n";
  for (const auto& f : fields) out += f + "\r\n";
  return out + "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

const std::vector<std::string> proxy_keys = {"AWS_ACCESS_KEY_ID=AKIDPROXY", "AWS_SECRET_ACCESS_KEY=proxy-secret"};

}  // namespace

TEST_CASE("aws signing: a request gistproxy signs carries its identity only, none of the client's SigV4 fields") {
  raw_upstream upstream({{raw_upstream::response(answer)}});
  proxy_process proxy({"--upstream", upstream.url(), "--sign-bedrock", "on", "--bedrock-region", "us-east-1"}, proxy_keys);
  const std::string target = path_for("bedrock-messages") +
                             "?X-Amz-Credential=AKIDCLIENT%2F20260101%2Fus-east-1%2Fbedrock%2Faws4_request"
                             "&trace=1&X-Amz-Security-Token=query-token&X-Amz-Date=20200101T000000Z";
  const auto body = request_for("bedrock-messages", "hello", "a short output").dump();
  const auto out = raw_exchange(proxy.port(), raw_request(target, {"Authorization: ", "X-Amz-Security-Token: header-token",
                                                                   "X-Amz-Content-Sha256: client-hash",
                                                                   "X-Amz-Date: 20200101T000000Z"}, body));
  REQUIRE(out.starts_with("HTTP/1.1 200"));
  REQUIRE(upstream.heads().size() == 1);
  const auto head = upstream.heads()[0];
  INFO(head);
  const auto authorization = fields_named(head, "authorization");
  REQUIRE(authorization.size() == 1);  // the blank one dropped, not forwarded beside ours
  CHECK(authorization[0].starts_with("AWS4-HMAC-SHA256 Credential=AKIDPROXY/"));
  CHECK(fields_named(head, "x-amz-security-token").empty());  // gistproxy's keys have no session token
  CHECK(fields_named(head, "x-amz-content-sha256").empty());
  const auto dates = fields_named(head, "x-amz-date");
  REQUIRE(dates.size() == 1);
  CHECK(dates[0] != "20200101T000000Z");
  const auto request_line = head.substr(0, head.find("\r\n"));
  CHECK(request_line == "POST " + path_for("bedrock-messages") + "?trace=1 HTTP/1.1");
  CHECK(lowercase(head).find("akidclient") == std::string::npos);
  CHECK(head.find("token") == std::string::npos);
}

TEST_CASE("aws signing: a blank Authorization never reaches Bedrock, and two Authorization fields are refused") {
  raw_upstream upstream({{raw_upstream::response(answer)}});
  proxy_process proxy({"--upstream", upstream.url()});
  const auto body = request_for("bedrock-messages", "hello", "a short output").dump();
  SECTION("blank alone, nothing to sign with: forwarded without it") {
    REQUIRE(raw_exchange(proxy.port(), raw_request(path_for("bedrock-messages"), {"Authorization:   "}, body))
                .starts_with("HTTP/1.1 200"));
    REQUIRE(upstream.heads().size() == 1);
    CHECK(fields_named(upstream.heads()[0], "authorization").empty());
  }
  SECTION("blank then a Bearer key: whose request it is cannot be told") {
    const auto out = raw_exchange(
        proxy.port(), raw_request(path_for("bedrock-messages"), {"Authorization: ", "Authorization: Bearer sk-client"}, body));
    CHECK(out.starts_with("HTTP/1.1 400"));
    CHECK(out.find("Authorization") != std::string::npos);
    CHECK(out.find("sk-client") == std::string::npos);
    CHECK(upstream.requests() == 0);
  }
}

TEST_CASE("aws signing: a presigned query with %-encoded names goes to Bedrock byte for byte, never re-signed") {
  raw_upstream upstream({{raw_upstream::response(answer)}});
  proxy_process proxy({"--upstream", upstream.url(), "--sign-bedrock", "on"}, proxy_keys);
  const std::string target = path_for("bedrock-messages") +
                             "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDCLIENT%2F20260101%2Fus-east-1%2F"
                             "bedrock%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-SignedHeaders=host"
                             "&X%2DAmz%2D%53ignature=abcdef";
  const auto body = request_for("bedrock-messages", "find the needle", haystack()).dump();  // offloadable
  REQUIRE(raw_exchange(proxy.port(), raw_request(target, {}, body)).starts_with("HTTP/1.1 200"));
  REQUIRE(upstream.bodies().size() == 1);
  CHECK(upstream.bodies()[0] == body);
  const auto head = upstream.heads()[0];
  CHECK(head.starts_with("POST " + target + " HTTP/1.1\r\n"));
  CHECK(fields_named(head, "authorization").empty());
}

TEST_CASE("aws signing: a SigV4a signature is the client's: its body goes to Bedrock byte for byte, never re-signed") {
  raw_upstream upstream({{raw_upstream::response(answer)}});
  proxy_process proxy({"--upstream", upstream.url(), "--sign-bedrock", "on"}, proxy_keys);
  const std::string sigv4a = "AWS4-ECDSA-P256-SHA256 Credential=AKIDCLIENT/20260101/bedrock/aws4_request, "
                             "SignedHeaders=host;x-amz-date;x-amz-region-set, Signature=3045022100ab";
  const auto body = request_for("bedrock-messages", "find the needle", haystack()).dump();  // offloadable
  REQUIRE(raw_exchange(proxy.port(), raw_request(path_for("bedrock-messages"),
                                                 {"Authorization: " + sigv4a, "X-Amz-Region-Set: *"}, body))
              .starts_with("HTTP/1.1 200"));
  REQUIRE(upstream.bodies().size() == 1);
  CHECK(upstream.bodies()[0] == body);  // was: offloaded under a signature that no longer matched
  CHECK(fields_named(upstream.heads()[0], "authorization") == std::vector<std::string>{sigv4a});
}

TEST_CASE("aws signing: one access key is one tenant whether it signs with SigV4, SigV4a or a presigned query") {
  raw_upstream upstream({{raw_upstream::response(answer)}});
  const auto spans = temp_path("spans.jsonl");
  // One thread, so one pooled connection: raw_upstream serves one at a time.
  proxy_process proxy({"--threads", "1", "--upstream", upstream.url(), "--span-log", spans.string()});
  const auto body = request_for("bedrock-messages", "hello", "a short output").dump();
  const std::string scope = "/20260101/us-east-1/bedrock/aws4_request";
  std::size_t sent = 0;
  // The conversation's trace id is keyed by the tenant's credential (receive.cpp): equal ids, one tenant.
  auto trace_of = [&](const std::string& target, const std::vector<std::string>& fields) {
    REQUIRE(raw_exchange(proxy.port(), raw_request(target, fields, body)).starts_with("HTTP/1.1 200"));
    const auto all = read_spans_until(spans, [&](const auto& s) { return count_named(s, "gistproxy.request") > sent; });
    const auto requests = spans_named(all, "gistproxy.request");
    REQUIRE(requests.size() == ++sent);
    return requests.back()["traceId"].get<std::string>();
  };
  const auto sigv4 = trace_of(path_for("bedrock-messages"),
                              {"Authorization: AWS4-HMAC-SHA256 Credential=AKIDSAME" + scope + ", SignedHeaders=host, Signature=00"});
  CHECK(trace_of(path_for("bedrock-messages"),
                 {"Authorization: AWS4-ECDSA-P256-SHA256 Credential=AKIDSAME/20260101/bedrock/aws4_request, "
                  "SignedHeaders=host, Signature=3045"}) == sigv4);
  CHECK(trace_of(path_for("bedrock-messages") + "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDSAME%2F20260101%2F"
                                                "us-east-1%2Fbedrock%2Faws4_request&X-Amz-Signature=00",
                 {}) == sigv4);
  CHECK(trace_of(path_for("bedrock-messages"),
                 {"Authorization: AWS4-HMAC-SHA256 Credential=AKIDOTHER" + scope + ", SignedHeaders=host, Signature=00"}) != sigv4);
  CHECK(trace_of(path_for("bedrock-messages"), {}) != sigv4);  // keyless: not that tenant either
}

TEST_CASE("aws signing: an X-Amz-Security-Token query parameter names the tenant, never the shared anonymous one") {
  raw_upstream upstream({{raw_upstream::response(answer)}});
  proxy_process proxy({"--upstream", upstream.url()});
  const auto body = request_for("bedrock-messages", "find the needle", haystack()).dump();  // offloadable
  REQUIRE(raw_exchange(proxy.port(), raw_request(path_for("bedrock-messages") + "?X-Amz-Security-Token=session-tok", {}, body))
              .starts_with("HTTP/1.1 200"));
  REQUIRE(upstream.bodies().size() == 1);
  CHECK(upstream.bodies()[0].size() < body.size() / 2);  // offloaded: the blobs are stored under a tenant
  CHECK(std::filesystem::exists(proxy.store_dir() / gistproxy::rewrite::tenant_of("session-tok")));
  CHECK_FALSE(std::filesystem::exists(proxy.store_dir() / "anonymous"));
}
