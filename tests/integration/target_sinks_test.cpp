// What a request target carries that is nobody else's business, a fragment
// (the client's own) and an absolute-form's userinfo (a password), reaches
// no sink: not the upstream, the access log, the spans, the recording or an
// error body, on requests gistproxy forwards and on those it refuses before
// it checked their target (bad Host, %2e%2e, bad Transfer-Encoding, a body
// over --max-body: http1_session.cpp answers them through the dispatch).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/integration/harness.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;

namespace {

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A proxy writing to every sink a target can reach: the access log (its
// output), the span log and the recording; one thread, so one pooled
// connection (raw_upstream serves one at a time).
struct sinks_stack {
  raw_upstream upstream{{{raw_upstream::response(R"({"ok":true})")}}};
  std::filesystem::path spans = temp_path("spans.jsonl"), record = temp_path("record.jsonl");
  proxy_process proxy{{"--threads", "1", "--upstream", upstream.url(), "--span-log", spans.string(), "--record", record.string(),
                       "--max-body", "1KiB"}};

  // `fields` end in CRLF; a body is framed by its Content-Length unless they say Transfer-Encoding.
  std::string exchange(const std::string& request_line, std::string fields, const std::string& body) {
    if (fields.find("Transfer-Encoding") == std::string::npos)
      fields += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return raw_exchange(proxy.port(), request_line + "\r\n" + fields + "Connection: close\r\n\r\n" + body);
  }
  // What every sink holds once `requests` requests were finished and the proxy stopped.
  std::string sinks_after(std::size_t requests) {
    read_spans_until(spans, [&](const auto& s) { return count_named(s, "gistproxy.request") >= requests; });
    REQUIRE(proxy.stop() == 0);
    const auto traced = file_text(spans), recorded = file_text(record), logged = proxy.log();
    std::size_t access_lines = 0;
    for (auto at = logged.find("\"msg\":\"access\""); at != std::string::npos; at = logged.find("\"msg\":\"access\"", at + 1))
      ++access_lines;
    // Each sink saw each request: an absent secret is absent from a record that exists.
    CHECK(access_lines == requests);
    CHECK(std::size_t(std::count(recorded.begin(), recorded.end(), '\n')) == requests);
    CHECK(traced.find("\"url.path\"") != std::string::npos);
    return logged + traced + recorded;
  }
};

const std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";

}  // namespace

TEST_CASE("a fragment in the request target is never forwarded, logged, traced or recorded") {
  struct row {
    std::string line, forwarded;  // forwarded: the request line the upstream must see; empty: refused
  };
  const auto r = GENERATE(values<row>({
      {"POST /v1/chat/completions#frag-SECRET HTTP/1.1", "POST /v1/chat/completions HTTP/1.1"},
      {"POST /v1/chat/completions?x=1#frag-SECRET HTTP/1.1", "POST /v1/chat/completions?x=1 HTTP/1.1"},
      {"POST http://api.openai.com/v1/chat/completions#frag-SECRET HTTP/1.1", "POST /v1/chat/completions HTTP/1.1"},
      {"POST /v1/%2e%2e/chat/completions#frag-SECRET HTTP/1.1", ""},  // refused before its target was checked
  }));
  CAPTURE(r.line);
  sinks_stack s;
  const auto out = s.exchange(r.line, "Host: api.openai.com\r\n", body);
  CHECK(out.starts_with(r.forwarded.empty() ? "HTTP/1.1 400" : "HTTP/1.1 200"));
  CHECK(out.find("SECRET") == std::string::npos);
  const auto heads = s.upstream.heads();
  REQUIRE(heads.size() == (r.forwarded.empty() ? 0u : 1u));
  if (!heads.empty()) CHECK(heads[0].starts_with(r.forwarded + "\r\n"));
  CHECK(s.sinks_after(1).find("SECRET") == std::string::npos);
}

TEST_CASE("an absolute-form target's password reaches no sink, forwarded or refused before its target is checked") {
  struct row {
    std::string name, line, fields, body;
    int status;
  };
  const std::string absolute = "http://user:PASSWORD-9f2@api.openai.com";
  const auto r = GENERATE_COPY(values<row>({
      {"forwarded", "POST " + absolute + "/v1/chat/completions HTTP/1.1", "Host: api.openai.com\r\n", body, 200},
      {"bad Host", "POST " + absolute + "/v1/chat/completions HTTP/1.1", "Host: a b\r\n", body, 400},
      {"%2e%2e", "POST " + absolute + "/v1/%2e%2e/x HTTP/1.1", "Host: api.openai.com\r\n", body, 400},
      {"bad Transfer-Encoding", "POST " + absolute + "/v1/chat/completions HTTP/1.1",
       "Host: api.openai.com\r\nTransfer-Encoding: gzip, chunked\r\n", "2\r\n{}\r\n0\r\n\r\n", 400},
      {"body over --max-body", "POST " + absolute + "/v1/chat/completions HTTP/1.1", "Host: api.openai.com\r\n",
       std::string(4096, 'x'), 413},
      {"a fragment too", "POST " + absolute + "/v1/%2e%2e/x#PASSWORD-9f2 HTTP/1.1", "Host: a b\r\n", body, 400},
  }));
  CAPTURE(r.name);
  sinks_stack s;
  const auto out = s.exchange(r.line, r.fields, r.body);
  CHECK(out.starts_with("HTTP/1.1 " + std::to_string(r.status)));
  CHECK(out.find("PASSWORD") == std::string::npos);  // nor the error body
  const auto heads = s.upstream.heads();
  REQUIRE(heads.size() == (r.status == 200 ? 1u : 0u));
  if (!heads.empty()) CHECK(heads[0].starts_with("POST /v1/chat/completions HTTP/1.1\r\n"));
  CHECK(s.sinks_after(1).find("PASSWORD") == std::string::npos);
}
