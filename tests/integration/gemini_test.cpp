// Google Gemini generateContent through the real binary against the mock
// upstream: offload, read_blob interception in JSON and in SSE streams,
// thoughtSignature passed back (the mock answers 400 otherwise, as Gemini 3
// does), usage summed, routing to --gemini-upstream.
#include <catch2/catch.hpp>
#include <set>

#include "rewrite/offload/engine.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/scripted_model.hpp"

using namespace gistproxy::testing;
using njson = nlohmann::json;

namespace {

std::string haystack() {
  std::string s;
  for (int i = 0; s.size() < 200 * 1024; ++i) {
    if (i == 2500) s += "config line 2500: NEEDLE secret_port=48213\n";
    s += "config line " + std::to_string(i) + ": key_" + std::to_string(i) + "\n";
  }
  return s;
}
const std::string expected = "found: 2501: config line 2500: NEEDLE secret_port=48213";

njson gemini_request(const std::string& ask, const std::string& output) {
  return {{"contents", {{{"role", "user"}, {"parts", {{{"text", ask}}}}},
                        {{"role", "model"}, {"parts", {{{"functionCall", {{"name", "cat"}, {"args", njson::object()}}}}}}},
                        {{"role", "user"}, {"parts", {{{"functionResponse", {{"name", "cat"}, {"response", {{"result", output}}}}}}}}}}},
          {"tools", {{{"functionDeclarations", {{{"name", "cat"}}, {{"name", "run"}}}}}}}};
}

std::string path(bool stream) {
  return stream ? "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
                : "/v1beta/models/gemini-2.5-flash:generateContent";
}

// The text of an answer's parts.
std::string text_of(const njson& response) {
  std::string out;
  for (const auto& p : response["candidates"][0]["content"]["parts"])
    if (p.contains("text")) out += p["text"].get<std::string>();
  return out;
}

struct streamed {
  std::string text;
  std::vector<std::string> calls;
  int finishes = 0;
  njson last;
};
streamed read_stream(const std::string& body) {
  streamed out;
  for (std::size_t at = body.find("data: "); at != std::string::npos; at = body.find("data: ", at + 1)) {
    auto e = njson::parse(body.substr(at + 6, body.find('\n', at) - at - 6));
    out.last = e;
    if (!e.contains("candidates")) continue;
    auto& c = e["candidates"][0];
    out.finishes += c.contains("finishReason");
    for (const auto& p : c["content"]["parts"]) {
      if (p.contains("text")) out.text += p["text"].get<std::string>();
      if (p.contains("functionCall")) out.calls.push_back(p["functionCall"]["id"]);
    }
  }
  return out;
}

struct stack {
  mock_upstream upstream;
  std::filesystem::path spans = temp_path("spans.jsonl");
  proxy_process proxy;
  explicit stack(std::vector<std::string> extra = {})
      : proxy([&] {
          std::vector<std::string> a{"--upstream", upstream.url(), "--span-log", spans.string()};
          a.insert(a.end(), extra.begin(), extra.end());
          return a;
        }()) {}
  http_result ask(const std::string& question, bool stream = false) {
    return http_request(proxy.port(), "POST", path(stream), gemini_request(question, haystack()).dump(),
                        {{"x-goog-api-key", "gm-test"}});
  }
};

}  // namespace

TEST_CASE("gemini: a line buried in an offloaded output comes back through read_blob, thoughtSignature passed back") {
  stack s;
  auto res = s.ask("find the needle");
  REQUIRE(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);
  auto j = njson::parse(res.body);
  CHECK(text_of(j) == expected);
  CHECK(j["usageMetadata"]["promptTokenCount"] == 200);
  CHECK(j["usageMetadata"]["candidatesTokenCount"] == 20);

  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].size() < haystack().size() / 2);  // offloaded
  CHECK(seen[1].find("NEEDLE secret_port=48213") != std::string::npos);
  auto tools = [](const std::string& b) { return b.substr(b.find("\"tools\""), b.find("]}]", b.find("\"tools\"")) - b.find("\"tools\"")); };
  CHECK(tools(seen[0]) == tools(seen[1]));
  CHECK(seen[0].find(R"({"functionDeclarations":[{"name":"read_blob")") != std::string::npos);
  auto next = njson::parse(seen[1]);
  const auto& model_turn = next["contents"][3];
  CHECK(model_turn["parts"][0]["thoughtSignature"] == gemini_signature_of("rb_0"));

  auto spans = read_spans_until(s.spans, [](const auto& all) { return count_named(all, "page_in") >= 1 && count_named(all, "gistproxy.request") >= 1; });
  for (auto& sp : spans)
    if (sp["name"] == "gistproxy.request") {
      CHECK(sp["attributes"]["gen_ai.provider.name"] == "gcp.gemini");
      CHECK(sp["attributes"]["gen_ai.request.model"] == "gemini-2.5-flash");
      CHECK(sp["attributes"]["gen_ai.usage.input_tokens"] == 200);
    }
  auto metrics = metrics_with(s.proxy.admin_port(), {"gistproxy_page_ins_total{api=\"gemini\",mode=\"pattern\",result=\"ok\",source=\"proxy\"} 1"});
  CHECK(metrics.find("gistproxy_page_ins_total{api=\"gemini\",mode=\"pattern\",result=\"ok\",source=\"proxy\"} 1") != std::string::npos);
}

TEST_CASE("gemini: at the hop limit the last hop sets function calling to NONE") {
  stack s({"--max-page-in-hops", "2"});
  auto res = s.ask("loop forever");
  REQUIRE(res.status == 200);
  CHECK(text_of(njson::parse(res.body)) == "gave up after 2 reads");
  auto seen = s.upstream.llm_bodies();
  REQUIRE(seen.size() == 3);
  CHECK_FALSE(njson::parse(seen[1]).contains("toolConfig"));
  CHECK(njson::parse(seen[2])["toolConfig"]["functionCallingConfig"]["mode"] == "NONE");
}

TEST_CASE("gemini: a turn mixing read_blob with the client's call gives the client only its own call") {
  stack s;
  auto res = s.ask("with client call");
  REQUIRE(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);
  CHECK(res.body.find("run_1") != std::string::npos);
  CHECK(res.body.find("run_0") == std::string::npos);
}

TEST_CASE("gemini streams: hops spliced into one stream, the turn ends once with usage summed") {
  auto script = GENERATE(as<std::string>{}, "find the needle", "with client call");
  stack s;
  auto res = s.ask(script, true);
  REQUIRE(res.ok());
  CHECK(res.status == 200);
  CHECK(res.body.find("read_blob") == std::string::npos);
  auto got = read_stream(res.body);
  CHECK(got.finishes == 1);
  CHECK(got.last["usageMetadata"]["promptTokenCount"] == 200);
  if (script == "find the needle") CHECK(got.text == expected);
  else CHECK(got.calls == std::vector<std::string>{"run_1"});
}

TEST_CASE("gemini: an upstream error on a later hop reaches the client as Gemini's error") {
  stack s;
  auto res = s.ask("fail second hop");
  CHECK(res.status == 500);
  CHECK(res.body.find("mock failure") != std::string::npos);
  auto streamed_res = s.ask("fail second hop", true);
  REQUIRE(streamed_res.ok());
  CHECK(streamed_res.body.find("data: {\"error\"") != std::string::npos);
  CHECK(streamed_res.body.find("HTTP 500") != std::string::npos);
}

TEST_CASE("gemini requests go to --gemini-upstream, the others to --upstream") {
  mock_upstream gemini_side;
  stack s({"--gemini-upstream", gemini_side.url()});
  REQUIRE(s.ask("hello").status == 200);
  REQUIRE(http_request(s.proxy.port(), "POST", "/v1/chat/completions",
                       R"({"model":"m","messages":[{"role":"user","content":"hi"}]})", {{"Authorization", "Bearer sk"}})
              .status == 200);
  CHECK(gemini_side.llm_bodies().size() == 1);
  CHECK(s.upstream.llm_bodies().size() == 1);
}

TEST_CASE("gemini: the key names the tenant, from x-goog-api-key or ?key= alike") {
  stack s;
  const auto body = gemini_request("hello", haystack()).dump();
  REQUIRE(http_request(s.proxy.port(), "POST", path(false), body, {{"x-goog-api-key", "gm-one"}}).status == 200);
  REQUIRE(http_request(s.proxy.port(), "POST", path(false) + "?key=gm-one", body, {}).status == 200);
  REQUIRE(http_request(s.proxy.port(), "POST", path(false) + "?alt=json&key=gm-two", body, {}).status == 200);
  std::set<std::string> tenants;
  for (auto& e : std::filesystem::directory_iterator(s.proxy.store_dir()))
    if (e.is_directory()) tenants.insert(e.path().filename().string());
  CHECK(tenants.size() == 2);  // gm-one (both ways) and gm-two; never the shared anonymous tenant
  CHECK_FALSE(tenants.contains("anonymous"));
}

TEST_CASE("gemini: ?key= names the tenant however Google reads it: after an empty one, its name %-encoded") {
  stack s;
  const auto body = gemini_request("hello", haystack()).dump();
  REQUIRE(http_request(s.proxy.port(), "POST", path(false) + "?key=&key=gm-first-empty", body, {}).status == 200);
  REQUIRE(http_request(s.proxy.port(), "POST", path(false) + "?alt=json&%6Bey=gm-encoded", body, {}).status == 200);
  REQUIRE(s.upstream.llm_bodies().size() == 2);
  for (const auto& forwarded : s.upstream.llm_bodies()) CHECK(forwarded.size() < body.size() / 2);  // both offloaded
  std::set<std::string> tenants;
  for (auto& e : std::filesystem::directory_iterator(s.proxy.store_dir()))
    if (e.is_directory()) tenants.insert(e.path().filename().string());
  // Each key's own tenant; was: both in the shared anonymous one.
  CHECK(tenants == std::set<std::string>{gistproxy::rewrite::tenant_of("gm-first-empty"), gistproxy::rewrite::tenant_of("gm-encoded")});
}
