// OpenAI-compatible providers side by side (--compatible NAME=PREFIX=URL):
// the real binary in front of OpenAI's upstream and two providers', each a
// mock upstream of its own. Each provider's requests are offloaded and paged
// in through read_blob like OpenAI's, reach only its own upstream with its
// own Authorization, and are labelled with its own name.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;
using njson = nlohmann::json;

namespace {

const std::string expected = "found: 2501: config line 2500: NEEDLE secret_port=48213";

struct provider_lane {
  std::string name;    // the provider (family) name; openai for OpenAI itself
  std::string prefix;  // the base path its clients use at gistproxy
  std::string key;     // its Bearer token
  std::string upstream_path;  // the path its upstream URL carries, which stands where PREFIX stood
};

// OpenAI, groq (its URL with a path, as Groq's is) and mistral (a bare host),
// all served by one gistproxy configured from a file: one line per provider.
struct side_by_side {
  mock_upstream openai, groq, mistral;
  std::filesystem::path spans = temp_path("spans.jsonl");
  std::filesystem::path config = [this] {
    auto path = temp_path("compatible.json");
    std::ofstream(path) << njson{{"compatible", {"groq=/groq/v1=" + groq.url() + "/openai/v1",
                                                 "mistral=/mistral/v1=" + mistral.url()}}}.dump();
    return path;
  }();
  proxy_process proxy{{"--config", config.string(), "--upstream", openai.url(), "--span-log", spans.string()}};
  const std::vector<provider_lane> lanes = {{"openai", "/v1", "sk-openai-1", "/v1"},
                                            {"groq", "/groq/v1", "gsk-groq-2", "/openai/v1"},
                                            {"mistral", "/mistral/v1", "mk-mistral-3", ""}};
  mock_upstream& upstream_of(const std::string& name) { return name == "groq" ? groq : name == "mistral" ? mistral : openai; }
};

// The metric label of a provider's endpoint over an API (chat, responses).
std::string api_label(const provider_lane& lane, const std::string& api) {
  return lane.name == "openai" ? api : lane.name + "-" + api;
}

http_result ask(side_by_side& s, const provider_lane& lane, const std::string& api) {
  const auto body = request_for(api, "find the needle", haystack());
  const std::string operation = api == "chat" ? "/chat/completions" : "/responses";
  return http_request(s.proxy.port(), "POST", lane.prefix + operation, body.dump(), {{"Authorization", "Bearer " + lane.key}});
}

}  // namespace

TEST_CASE("compatible: two providers and OpenAI side by side, each offloaded, paged in, keyed and labelled its own") {
  side_by_side s;
  const auto api = GENERATE(as<std::string>{}, "chat", "responses");
  for (const auto& lane : s.lanes) {
    CAPTURE(lane.name, api);
    const auto res = ask(s, lane, api);
    REQUIRE(res.status == 200);
    CHECK(res.body.find("read_blob") == std::string::npos);
    CHECK(answer_text(api, njson::parse(res.body)) == expected);
  }
  for (const auto& lane : s.lanes) {
    CAPTURE(lane.name);
    auto& upstream = s.upstream_of(lane.name);
    const auto bodies = upstream.llm_bodies();
    const auto heads = upstream.llm_headers();
    // The offloaded turn, then the hop carrying the page read back: here and nowhere else.
    REQUIRE(bodies.size() == 2);
    CHECK(bodies[0].size() < haystack().size() / 2);
    CHECK(bodies[1].find("NEEDLE secret_port=48213") != std::string::npos);
    for (const auto& head : heads) CHECK(head.at("authorization") == "Bearer " + lane.key);
  }
  // A request's span ends after its metrics are counted: once all three are there, so are their figures.
  auto spans = read_spans_until(s.spans, [](const auto& all) { return count_named(all, "gistproxy.request") >= 3; });
  const auto requests = spans_named(spans, "gistproxy.request");
  REQUIRE(requests.size() == 3);
  std::set<std::string> providers;
  for (const auto& r : requests) {
    const auto& attributes = r["attributes"];
    const std::string provider = attributes.value("gen_ai.provider.name", "");
    providers.insert(provider);
    CHECK(attributes.value("gistproxy.upstream_family", "") == provider);
  }
  CHECK(providers == std::set<std::string>{"openai", "groq", "mistral"});

  const auto metrics = http_request(s.proxy.admin_port(), "GET", "/metrics").body;
  for (const auto& lane : s.lanes) {
    const auto label = api_label(lane, api);
    CAPTURE(label);
    CHECK(series_value(metrics, "gistproxy_page_ins_total{api=\"" + label +
                                    "\",mode=\"pattern\",result=\"ok\",source=\"proxy\"}") == 1);
    CHECK(series_value(metrics, "gistproxy_cost_usd_total{api=\"" + label + "\",kind=\"input\",group=\"treated\"}") > 0);
  }
  // The live view lists each provider's conversation under its own label (its feed is a queue: polled).
  std::set<std::string> live;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (live.size() < 3 && std::chrono::steady_clock::now() < deadline) {
    live.clear();
    const auto list = njson::parse(http_request(s.proxy.admin_port(), "GET", "/api/conversations").body, nullptr, false);
    if (list.is_object() && list["conversations"].is_array())
      for (const auto& c : list["conversations"]) live.insert(c.value("api", ""));
    if (live.size() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::set<std::string> labels;
  for (const auto& lane : s.lanes) labels.insert(api_label(lane, api));
  CHECK(live == labels);
}

TEST_CASE("compatible: every path under a prefix is its provider's, with its URL's path in the prefix's place") {
  side_by_side s;
  // The mock upstreams' …/echo answer the target and headers that arrived.
  for (const auto& lane : s.lanes) {
    CAPTURE(lane.name);
    const auto before = s.openai.requests_served() + s.groq.requests_served() + s.mistral.requests_served();
    const auto res =
        http_request(s.proxy.port(), "GET", lane.prefix + "/echo?x=1", "", {{"Authorization", "Bearer " + lane.key}});
    REQUIRE(res.status == 200);
    const auto echoed = njson::parse(res.body);
    CHECK(echoed["target"] == lane.upstream_path + "/echo?x=1");
    CHECK(echoed["headers"]["Authorization"] == "Bearer " + lane.key);
    CHECK(s.upstream_of(lane.name).requests_served() == 1);  // its own upstream, and it alone
    CHECK(s.openai.requests_served() + s.groq.requests_served() + s.mistral.requests_served() == before + 1);
  }
}

TEST_CASE("compatible: a credential that names another provider is refused under a prefix, reaching no upstream") {
  side_by_side s;
  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"x-api-key", "sk-ant-9"}, {"api-key", "azure-9"}, {"x-goog-api-key", "goog-9"}}) {
    CAPTURE(field);
    const auto res = http_request(s.proxy.port(), "POST", "/groq/v1/chat/completions",
                                  request_for("chat", "hi", "short").dump(), {{field, value}});
    CHECK(res.status == 400);
    CHECK(res.body.find("credential_mismatch") != std::string::npos);
  }
  CHECK(s.openai.requests_served() + s.groq.requests_served() + s.mistral.requests_served() == 0);
}

TEST_CASE("compatible: a provider named twice, or at a built-in API's paths, stops serve at start, saying why") {
  const auto flags = GENERATE(values<std::vector<std::string>>({
      {"--compatible", "groq=/groq/v1=http://127.0.0.1:1/v1", "--compatible", "groq=/other/v1=http://127.0.0.1:1/v1"},
      {"--compatible", "x=/v1=http://127.0.0.1:1"},
      {"--compatible", "x=/x/v1=ftp://127.0.0.1:1"},
      {"--compatible", "x=/x/v1"},
  }));
  CAPTURE(flags);
  std::vector<std::string> args = {gistproxy_binary(), "serve"};
  args.insert(args.end(), flags.begin(), flags.end());
  const auto run = run_command(args, std::chrono::seconds(10));
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("--compatible") != std::string::npos);
}
