// A provider's credential reaches only that provider: the real binary in front
// of one loopback upstream per API family, every credential header against
// every path family (the paths gistproxy rewrites and those it does not), and
// token counts rewritten as their turn is.
#include <catch2/catch.hpp>

#include <array>
#include <memory>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/raw_upstream.hpp"

using namespace gistproxy::testing;
using njson = nlohmann::json;

namespace {

const std::array<std::string, 6> families = {"openai", "anthropic", "gemini", "vertex", "azure", "bedrock"};

// One upstream per family and one proxy in front of them, shared by the
// table's rows (each row's credential value is its own, so rows cannot mix).
struct family_stack {
  std::vector<std::unique_ptr<raw_upstream>> upstreams;
  std::unique_ptr<proxy_process> proxy;
  family_stack() {
    std::vector<std::string> args{"--threads", "1"};  // one pooled connection per upstream: raw_upstream serves one at a time
    for (const auto& f : families) {
      upstreams.push_back(std::make_unique<raw_upstream>(std::vector<raw_answer>{{raw_upstream::response(R"({"ok":true})")}}));
      args.push_back(f == "openai" ? "--upstream" : "--" + f + "-upstream");
      args.push_back(upstreams.back()->url());
    }
    proxy = std::make_unique<proxy_process>(args);
  }
  static family_stack& shared() {
    static family_stack s;
    return s;
  }
};

struct path_row {
  std::string family, method, target;
  std::map<std::string, std::string> extra;  // headers the API's SDK always sends
  // A path several providers serve alike (/v1/models): a provider's own key
  // says whose it is; a Bearer token goes to `family`.
  bool credential_decides = false;
};

struct credential_row {
  std::string name;                   // for the failure message
  std::string header;                 // empty: the credential is a query parameter
  std::string scheme;                 // prefix of the header's value, or the query's text before the credential
  std::vector<std::string> owners;    // families it belongs to; empty: any (Bearer: the path decides)
};

const std::vector<path_row>& paths() {
  static const std::vector<path_row> rows = {
      {"openai", "POST", "/v1/chat/completions", {}},
      {"openai", "POST", "/v1/embeddings", {}},
      {"openai", "GET", "/v1/models", {}, true},
      {"openai", "POST", "/v1/threads/thread_1/messages", {}},
      {"anthropic", "POST", "/v1/messages?beta=true", {{"anthropic-version", "2023-06-01"}}},
      {"anthropic", "POST", "/v1/messages/count_tokens?beta=true", {{"anthropic-version", "2023-06-01"}}},
      {"anthropic", "GET", "/v1/models", {{"anthropic-version", "2023-06-01"}}},
      {"gemini", "POST", "/v1beta/models/gemini-2.5-flash:generateContent", {}},
      {"gemini", "POST", "/v1beta/models/gemini-2.5-flash:countTokens", {}},
      {"gemini", "GET", "/v1beta/models/gemini-2.5-flash", {}},
      {"vertex", "POST", "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:countTokens", {}},
      {"vertex", "GET", "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash", {}},
      {"vertex", "POST", "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude:rawPredict", {}},
      {"bedrock", "POST", "/model/anthropic.claude-v2/invoke", {}},
      {"bedrock", "GET", "/model/anthropic.claude-v2/invoke", {}},
      {"bedrock", "POST", "/model/anthropic.claude-v2/count-tokens", {}},
      {"bedrock", "POST", "/guardrail/g1/version/1/apply", {}},
      {"bedrock", "POST", "/async-invoke", {}},
      {"azure", "POST", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", {}},
      {"azure", "POST", "/openai/deployments/text-embedding-3/embeddings?api-version=2024-10-21", {}},
      {"azure", "POST", "/openai/deployments/team/gpt-4o/chat/completions?api-version=2024-10-21", {}},
  };
  return rows;
}

const std::vector<credential_row>& credentials() {
  static const std::vector<credential_row> rows = {
      {"Authorization: Bearer", "Authorization", "Bearer ", {}},
      {"x-api-key", "x-api-key", "", {"anthropic"}},
      {"x-goog-api-key", "x-goog-api-key", "", {"gemini", "vertex"}},
      {"?key=", "", "key=", {"gemini", "vertex"}},
      {"api-key", "api-key", "", {"azure"}},
      {"SigV4", "Authorization", "AWS4-HMAC-SHA256 Credential=", {"bedrock"}},
      // The same credentials as their providers also read them.
      {"?key= after an empty one", "", "key=&key=", {"gemini", "vertex"}},
      {"?key= with its name %-encoded", "", "%6Bey=", {"gemini", "vertex"}},
      {"?X-Amz-Security-Token=", "", "X-Amz-Security-Token=", {"bedrock"}},
      {"SigV4a", "Authorization", "AWS4-ECDSA-P256-SHA256 Credential=", {"bedrock"}},
  };
  return rows;
}

// error.type of an error answer; empty when the body is not one (never throws: a row must not end the table).
std::string error_type(const std::string& body) {
  const auto j = njson::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return {};
  const auto& type = j["error"]["type"];
  return type.is_string() ? type.get<std::string>() : std::string();
}

std::size_t family_index(const std::string& f) {
  return std::size_t(std::find(families.begin(), families.end(), f) - families.begin());
}

}  // namespace

TEST_CASE("credentials: every credential reaches its own provider's upstream only, on every path family") {
  const auto p = GENERATE(range(std::size_t(0), paths().size()));
  const auto c = GENERATE(range(std::size_t(0), credentials().size()));
  const auto& path = paths()[p];
  const auto& cred = credentials()[c];
  CAPTURE(path.family, path.method, path.target, cred.name);
  auto& s = family_stack::shared();
  // A value no other row sends: where it arrives is where this row went.
  const std::string secret = "cred" + std::to_string(p) + "x" + std::to_string(c) + "zq";
  auto headers = path.extra;
  std::string target = path.target;
  if (cred.header.empty()) target += (target.find('?') == std::string::npos ? "?" : "&") + cred.scheme + secret;
  else if (cred.scheme.starts_with("AWS4"))
    headers[cred.header] = cred.scheme + secret + "/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=00";
  else headers[cred.header] = cred.scheme + secret;
  const std::string body = path.method == "GET" ? "" : R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";

  std::vector<std::size_t> before;
  for (const auto& u : s.upstreams) before.push_back(u->heads().size());
  const auto res = http_request(s.proxy->port(), path.method, target, body, headers);
  REQUIRE(res.ok());

  const bool belongs = cred.owners.empty() || path.credential_decides ||
                       std::find(cred.owners.begin(), cred.owners.end(), path.family) != cred.owners.end();
  const std::size_t own = family_index(path.credential_decides && !cred.owners.empty() ? cred.owners.front() : path.family);
  for (std::size_t i = 0; i < families.size(); ++i) {
    CAPTURE(families[i]);
    const auto heads = s.upstreams[i]->heads();
    const auto arrived = heads.size() - before[i];
    CHECK(arrived == (belongs && i == own ? 1u : 0u));
    for (const auto& h : heads) CHECK((h.find(secret) == std::string::npos || (belongs && i == own)));
  }
  if (belongs) {
    CHECK(res.status == 200);
  } else {
    CHECK(res.status == 400);
    CHECK(error_type(res.body) == "credential_mismatch");
    CHECK(res.body.find(secret) == std::string::npos);  // said which kind, never which value
  }
}

TEST_CASE("credentials: a gateway's mounted path goes to its one provider whatever the method") {
  struct row {
    std::string family, method, target;
  };
  const auto r = GENERATE(values<row>({
      {"anthropic", "GET", "/anthropic/v1/models"},
      {"anthropic", "POST", "/anthropic/v1/messages/batches"},
      {"anthropic", "DELETE", "/anthropic/v1/messages/batches/b1"},
      {"anthropic", "OPTIONS", "/anthropic/v1/messages"},
      {"gemini", "GET", "/gemini/v1beta/models"},
      {"gemini", "POST", "/gemini/v1beta/models/gemini-2.5-flash:generateContent"},
      {"gemini", "DELETE", "/gemini/v1beta/cachedContents/c1"},
      {"vertex", "POST", "/vertex_ai/v1/projects/p/locations/us-central1/publishers/google/models/g:generateContent"},
      {"vertex", "GET", "/vertex_ai/v1/projects/p/locations/us-central1/publishers/google/models/g"},
      {"vertex", "POST", "/vertex_ai/v1/projects/p/locations/us-east5/publishers/anthropic/models/c:rawPredict"},
      {"bedrock", "POST", "/bedrock/model/m/converse"},
      {"azure", "POST", "/azure/openai/deployments/d/embeddings?api-version=2024-10-21"},
  }));
  CAPTURE(r.method, r.target);
  auto& s = family_stack::shared();
  std::vector<std::size_t> before;
  for (const auto& u : s.upstreams) before.push_back(u->heads().size());
  const std::string body = r.method == "POST" ? R"({"model":"m","messages":[{"role":"user","content":"hi"}]})" : "";
  const auto res = http_request(s.proxy->port(), r.method, r.target, body, {{"Authorization", "Bearer gateway-key"}});
  REQUIRE(res.ok());
  CHECK(res.status == 200);
  for (std::size_t i = 0; i < families.size(); ++i) {
    CAPTURE(families[i]);
    CHECK(s.upstreams[i]->heads().size() - before[i] == (families[i] == r.family ? 1u : 0u));
  }
}

TEST_CASE("credentials: a refused credential is counted as a credential_mismatch error") {
  auto& s = family_stack::shared();
  const auto res = http_request(s.proxy->port(), "POST", "/v1/chat/completions", "{}", {{"x-goog-api-key", "g"}});
  REQUIRE(res.status == 400);
  const std::string line = "gistproxy_errors_total{source=\"downstream\",type=\"credential_mismatch\",group=\"treated\"}";
  CHECK(metrics_with(s.proxy->admin_port(), {line}).find(line) != std::string::npos);
}

TEST_CASE("credentials: a query too long to read whole is refused, so a key hidden past its bound reaches no upstream") {
  auto& s = family_stack::shared();
  std::string many_pairs = "/v1/chat/completions?";
  for (int i = 0; i < 1000; ++i) many_pairs += "a=1&";
  const std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
  for (const auto& target : {many_pairs + "key=hidden-past-pairs-zq",
                             "/v1/chat/completions?pad=" + std::string(64 * 1024, 'x') + "&key=hidden-past-bytes-zq"}) {
    CAPTURE(target.size());
    std::vector<std::size_t> before;
    for (const auto& u : s.upstreams) before.push_back(u->heads().size());
    const auto res = http_request(s.proxy->port(), "POST", target, body, {{"Authorization", "Bearer openai-key"}});
    REQUIRE(res.ok());
    CHECK(res.status == 400);
    CHECK(error_type(res.body) == "bad_request");
    CHECK(res.body.find("hidden") == std::string::npos);
    for (std::size_t i = 0; i < families.size(); ++i) CHECK(s.upstreams[i]->heads().size() == before[i]);
  }
  // Empty pieces are no pairs: a key after 10,000 of them is read, and refused as Gemini's.
  const auto res = http_request(s.proxy->port(), "POST", "/v1/chat/completions?" + std::string(10'000, '&') + "key=k-zq",
                                body, {{"Authorization", "Bearer openai-key"}});
  REQUIRE(res.ok());
  CHECK(res.status == 400);
  CHECK(error_type(res.body) == "credential_mismatch");
}

namespace {

struct count_row {
  std::string api, family, count_target, turn_target;
  std::map<std::string, std::string> headers;
  std::string count_answer, turn_answer;
};

std::string vertex_count_target() {
  auto t = path_for("vertex-gemini");
  return t.substr(0, t.rfind(':')) + ":countTokens";
}

}  // namespace

TEST_CASE("credentials: a token count goes to its own provider, rewritten as its turn, its answer passed back") {
  const auto row = GENERATE(values<count_row>({
      {"messages", "anthropic", "/v1/messages/count_tokens?beta=true", "/v1/messages?beta=true",
       {{"x-api-key", "sk-ant"}, {"anthropic-version", "2023-06-01"}}, R"({"input_tokens":1234})",
       R"({"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],)"
       R"("stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}})"},
      {"vertex-gemini", "vertex", vertex_count_target(), path_for("vertex-gemini"), {{"Authorization", "Bearer ya29"}},
       R"({"totalTokens":1234,"totalBillableCharacters":5678})",
       R"({"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}],)"
       R"("usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}})"},
      // The same under a gateway's mount: its provider, read by its dialect.
      {"vertex-gemini", "vertex", "/vertex_ai" + vertex_count_target(), "/vertex_ai" + path_for("vertex-gemini"),
       {{"Authorization", "Bearer ya29"}}, R"({"totalTokens":1234,"totalBillableCharacters":5678})",
       R"({"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}],)"
       R"("usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}})"},
  }));
  CAPTURE(row.api, row.count_target);
  raw_upstream other({{raw_upstream::response(R"({"wrong":"upstream"})")}});
  raw_upstream own({{raw_upstream::response(row.count_answer)}, {raw_upstream::response(row.turn_answer)}});
  proxy_process proxy({"--threads", "1", "--upstream", other.url(), "--" + row.family + "-upstream", own.url()});
  const std::string sent = request_for(row.api, "find the needle", haystack()).dump();

  const auto count = http_request(proxy.port(), "POST", row.count_target, sent, row.headers);
  REQUIRE(count.status == 200);
  CHECK(count.body == row.count_answer);  // not intercepted: the provider's answer as it came
  const auto turn = http_request(proxy.port(), "POST", row.turn_target, sent, row.headers);
  REQUIRE(turn.status == 200);

  CHECK(other.requests() == 0);
  const auto bodies = own.bodies();
  REQUIRE(bodies.size() == 2);
  CHECK(bodies[0].size() < sent.size() / 2);  // the outputs offloaded, as in the turn
  CHECK(bodies[0] == bodies[1]);              // counted exactly what the turn sends
}

TEST_CASE("credentials: a credential field sent twice is refused on every API and on /v1/blobs, neither value echoed or forwarded") {
  struct row {
    std::string family, target, field;
  };
  const std::vector<row> rows = {
      {"openai", "/v1/chat/completions", "Authorization: Bearer "},
      {"anthropic", "/v1/messages", "x-api-key: "},
      {"gemini", "/v1beta/models/gemini-2.5-flash:generateContent", "x-goog-api-key: "},
      {"azure", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", "api-key: "},
      {"openai", "/v1/blobs/0123456789abcdef?api=chat", "Authorization: Bearer "},
      {"anthropic", "/v1/blobs/0123456789abcdef?api=messages", "x-api-key: "},
  };
  auto& s = family_stack::shared();
  for (const auto& r : rows) {
    CAPTURE(r.target, r.field);
    const bool blob = r.target.starts_with("/v1/blobs/");
    const std::string body = blob ? "" : R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
    const auto before = s.upstreams[family_index(r.family)]->heads().size();
    const auto out = raw_exchange(s.proxy->port(), std::string(blob ? "GET " : "POST ") + r.target +
                                                       " HTTP/1.1\r\nHost: x\r\n" + r.field + "firstkeyzq\r\n" + r.field +
                                                       "secondkeyzq\r\nContent-Type: application/json\r\nContent-Length: " +
                                                       std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    CHECK(out.starts_with("HTTP/1.1 400"));
    CHECK(out.find("more than one") != std::string::npos);
    CHECK(out.find("keyzq") == std::string::npos);
    CHECK(s.upstreams[family_index(r.family)]->heads().size() == before);
  }
}
