#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/page_in/page_in.hpp"
#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "tests/support/fixture_files.hpp"

using namespace gistproxy::rewrite;

namespace {

using gistproxy::testing::read_fixture;

// Compares with the golden file; GISTPROXY_UPDATE_GOLDENS=1 rewrites it.
void check_golden(const std::string& name, const std::string& actual) {
  auto path = std::string(GISTPROXY_FIXTURES) + "/" + name;
  if (std::getenv("GISTPROXY_UPDATE_GOLDENS")) std::ofstream(path, std::ios::binary) << actual;
  auto expected = read_fixture(name);
  REQUIRE_FALSE(expected.empty());
  CHECK(actual == expected);
}

struct fixture {
  std::int64_t now = 1'700'000'000;
  memory_blob_store store{[this] { return now; }};
  char_ratio_estimator estimator;
  offload_engine engine;
  explicit fixture(offload_config cfg = {}) : engine(std::move(cfg), store, estimator) {}
};

std::string chat_body(const std::vector<std::string>& outputs, bool with_tools = true) {
  nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", "go"}}});
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    auto id = "call_" + std::to_string(i);
    messages.push_back({{"role", "assistant"},
                        {"tool_calls", {{{"id", id}, {"type", "function"},
                                         {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}});
    messages.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", outputs[i]}});
  }
  nlohmann::json body = {{"model", "m"}, {"messages", messages}};
  if (with_tools)
    body["tools"] = nlohmann::json::array({{{"type", "function"}, {"function", {{"name", "run"}}}}});
  return body.dump();
}

}  // namespace

TEST_CASE("golden: each dialect's request is rewritten to the committed forwarded body") {
  auto [name, path] = GENERATE(table<std::string, std::string>({
      {"chat", "/v1/chat/completions"},
      {"responses", "/v1/responses"},
      {"messages", "/v1/messages"},
  }));
  std::map<std::string, std::string> files = {{"chat", "chat/tool_outputs"},
                                              {"responses", "responses/function_call_output"},
                                              {"messages", "messages/tool_results"}};
  fixture f;
  auto request = read_fixture(files[name] + ".request.json");
  auto result = f.engine.rewrite(endpoint_for("POST", path)->wire(), request, "tenant");
  REQUIRE(result.report.outcome == rewrite_outcome::rewritten);
  CHECK(nlohmann::json::accept(result.body));
  check_golden(files[name] + ".forwarded.json", result.body);
  // Every offloaded output pages back to its exact bytes.
  for (const auto& o : result.report.offloads) {
    page_request req;
    req.handle = o.hash.substr(0, 16);
    auto page = page_in(f.store, "tenant", req, {});
    REQUIRE(page.ok);
    std::string exact = page.text;
    if (exact.starts_with("[read_blob: ")) {  // binary (an image): its base64, after one header line
      REQUIRE(base64_decode(exact.substr(exact.find('\n') + 1), exact));
    }
    CHECK(exact.size() == o.bytes);
    CHECK(sha256_hex(exact) == o.hash);
  }
}

TEST_CASE("chat: the big log and source outputs are offloaded, the small one stays, read_blob is appended") {
  fixture f;
  auto request = read_fixture("chat/tool_outputs.request.json");
  auto result = f.engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), request, "tenant");
  auto& r = result.report;
  REQUIRE(r.offloads.size() == 2);
  CHECK(r.offloads[0].tool_name == "read_log");
  CHECK(r.offloads[0].kind == "log");
  CHECK(r.offloads[1].tool_name == "read_file");
  CHECK(r.offloads[1].kind == "source");
  CHECK(r.tool_injected);
  auto j = nlohmann::json::parse(result.body);
  auto log_ref = j["messages"][3]["content"].get<std::string>();
  CHECK(log_ref.find("read_blob(\"" + std::string(r.offloads[0].hash.substr(0, 16)) + "\")") != std::string::npos);
  CHECK(log_ref.find("ERROR") != std::string::npos);  // logs preview their tail, where errors are
  CHECK(j["messages"][4]["content"] == "04:00");
  CHECK(j["tools"].size() == 3);
  CHECK(j["tools"][2]["function"]["name"] == "read_blob");
  // The reference names the handle exactly once in call form.
  std::size_t calls = 0;
  for (auto p = log_ref.find("read_blob(\""); p != std::string::npos; p = log_ref.find("read_blob(\"", p + 1)) ++calls;
  CHECK(calls == 1);
}

TEST_CASE("messages: client tool results are offloaded, images become placeholders, server tool results are untouched") {
  fixture f;
  auto request = read_fixture("messages/tool_results.request.json");
  auto result = f.engine.rewrite(endpoint_for("POST", "/v1/messages")->wire(), request, "tenant");
  auto j = nlohmann::json::parse(result.body);
  auto original = nlohmann::json::parse(request);
  CHECK(j["messages"][1] == original["messages"][1]);  // server tool result and tool_use block as sent
  auto& shot = j["messages"][4]["content"][0]["content"];
  CHECK(shot[1]["type"] == "text");
  CHECK(shot[1]["text"].get<std::string>().rfind("[image: png, ", 0) == 0);
  bool image_offloaded = false;
  for (auto& o : result.report.offloads) image_offloaded |= o.kind == "image/png";
  CHECK(image_offloaded);
  CHECK(j["tools"].back()["name"] == "read_blob");
  CHECK(j["tools"].back().contains("input_schema"));
  CHECK(j["tools"][1]["cache_control"]["type"] == "ephemeral");  // the client's cache breakpoint stays
}

TEST_CASE("the same request gives identical bytes, on first sight and once stored") {
  fixture f;
  auto* d = endpoint_for("POST", "/v1/responses");
  auto request = read_fixture("responses/function_call_output.request.json");
  auto first = f.engine.rewrite(d->wire(), request, "tenant");
  auto second = f.engine.rewrite(d->wire(), request, "tenant");
  REQUIRE(first.report.offloads.size() == 1);
  CHECK_FALSE(first.report.offloads[0].deduplicated);
  CHECK(second.report.offloads[0].deduplicated);
  CHECK(first.body == second.body);
  CHECK(f.store.writes() == 1);
  fixture other;  // another store, another clock: same bytes out
  other.now += 86400 * 3;
  CHECK(other.engine.rewrite(d->wire(), request, "tenant").body == first.body);
}

TEST_CASE("lossless: random tool outputs page back byte for byte") {
  std::mt19937 rng(7);
  offload_config cfg;
  cfg.tool_rules["run"] = {tool_rule::action::always, 0};
  cfg.min_offload_bytes = 0;
  fixture f(cfg);
  auto* d = endpoint_for("POST", "/v1/chat/completions");
  for (int round = 0; round < 60; ++round) {
    std::string bytes;
    std::size_t n = 1 + rng() % (round % 10 == 0 ? 200000 : 3000);
    for (std::size_t i = 0; i < n; ++i) {
      switch (rng() % 9) {
        case 0: bytes += char(rng() % 32); break;  // control characters, NUL included
        case 1: bytes += "\"\\/"[rng() % 3]; break;
        case 2: bytes += "\xC3\xA9"; break;
        case 3: bytes += "\xE2\x9C\x93"; break;
        case 4: bytes += "\xF0\x9F\x98\x80"; break;
        case 5: bytes += "\r\n"; break;
        case 6: bytes += "\n\n"; break;
        default: bytes += char('a' + rng() % 26);
      }
    }
    auto body = chat_body({bytes});
    auto result = f.engine.rewrite(d->wire(), body, "tenant");
    REQUIRE(result.report.offloads.size() == 1);
    page_request req;
    req.handle = result.report.offloads[0].hash;
    auto page = page_in(f.store, "tenant", req, page_limits::with_page(1u << 20));
    REQUIRE(page.ok);
    CHECK(page.text == bytes);
  }
}

TEST_CASE("outputs over the blob cap stay inline, whole") {
  offload_config cfg;
  cfg.max_blob_bytes = 10000;
  fixture f(cfg);
  std::string big(40000, 'x');
  auto body = chat_body({big});
  auto result = f.engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), body, "t");
  CHECK(result.report.offloads.empty());
  CHECK(result.report.skipped_too_large == 1);
  CHECK(nlohmann::json::parse(result.body)["messages"][2]["content"] == big);
}

TEST_CASE("unparsable bodies are reported and left alone") {
  fixture f;
  auto result = f.engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), "{\"messages\": [", "t");
  CHECK(result.report.outcome == rewrite_outcome::unparsable);
  CHECK(result.body.empty());
}

TEST_CASE("read_blob is added to every request that declares tools, and never twice") {
  fixture f;
  auto* d = endpoint_for("POST", "/v1/chat/completions");
  auto small = f.engine.rewrite(d->wire(), chat_body({"tiny"}), "t");
  CHECK(small.report.outcome == rewrite_outcome::rewritten);
  CHECK(small.report.offloads.empty());
  CHECK(nlohmann::json::parse(small.body)["tools"].size() == 2);
  auto no_tools = f.engine.rewrite(d->wire(), chat_body({"tiny"}, false), "t");
  CHECK(no_tools.report.outcome == rewrite_outcome::unchanged);
  offload_config lazy;
  lazy.inject = inject_mode::when_referenced;
  fixture g(lazy);
  CHECK(g.engine.rewrite(d->wire(), chat_body({"tiny"}), "t").report.outcome == rewrite_outcome::unchanged);
}

TEST_CASE("a client tool named read_blob keeps its name, ours takes the fallback") {
  fixture f;
  nlohmann::json body = {{"model", "m"},
                         {"messages", {{{"role", "tool"}, {"tool_call_id", "c"}, {"content", std::string(20000, 'y')}}}},
                         {"tools", {{{"type", "function"}, {"function", {{"name", "read_blob"}}}}}}};
  auto result = f.engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), body.dump(), "t");
  auto j = nlohmann::json::parse(result.body);
  CHECK(j["tools"][1]["function"]["name"] == "gistproxy_read_blob");
  CHECK(j["messages"][0]["content"].get<std::string>().find("gistproxy_read_blob(\"") != std::string::npos);
}

TEST_CASE("per-tool policy: never keeps an output inline, a lower threshold offloads sooner") {
  offload_config cfg;
  cfg.tool_rules["run"] = {tool_rule::action::never, 0};
  fixture f(cfg);
  auto* d = endpoint_for("POST", "/v1/chat/completions");
  CHECK(f.engine.rewrite(d->wire(), chat_body({std::string(50000, 'n')}), "t").report.offloads.empty());
  offload_config low;
  low.tool_rules["run"] = {tool_rule::action::threshold, 100};
  fixture g(low);
  CHECK(g.engine.rewrite(d->wire(), chat_body({std::string(2000, 'n')}), "t").report.offloads.size() == 1);
}

TEST_CASE("budget mode evicts oldest first down to the floor, and keeps earlier decisions") {
  offload_config cfg;
  cfg.budget_tokens = 3000;  // floor: 1800
  fixture f(cfg);
  auto* d = endpoint_for("POST", "/v1/chat/completions");
  std::vector<std::string> outputs;
  for (int i = 0; i < 5; ++i) outputs.push_back(std::string(4000, char('a' + i)) + "\n");  // ~1000 tokens each
  auto turn1 = f.engine.rewrite(d->wire(), chat_body(outputs), "t");
  REQUIRE(turn1.report.offloads.size() >= 3);
  CHECK(turn1.report.offloads[0].order == 0);  // oldest first
  CHECK(turn1.report.offloads[1].order == 1);
  CHECK((turn1.body.size() / 4 <= 1800 + 300 || turn1.report.offloads.size() == 5));
  CHECK(turn1.body.size() / 4 <= 3000);  // under the budget at least
  // Next turn: one more output; every earlier decision stands (the prefix is stable).
  outputs.push_back("small\n");
  auto turn2 = f.engine.rewrite(d->wire(), chat_body(outputs), "t");
  for (std::size_t i = 0; i < turn1.report.offloads.size(); ++i)
    CHECK(turn2.report.offloads.at(i).hash == turn1.report.offloads[i].hash);
}

TEST_CASE("a store that refuses writes leaves every output inline (fail-open) and says so") {
  struct refusing_store final : blob_store {
    put_result put(std::string_view, const blob_meta&) override { return {blob_error::io, false, "disk full"}; }
    bool contains(std::string_view, std::string_view) override { return false; }
    get_result get(std::string_view, std::string_view) override { return {blob_error::not_found, {}, {}, {}}; }
    verify_report verify() override { return {}; }
    std::uint64_t gc(std::uint64_t) override { return 0; }
    store_stats stats() override { return {}; }
  } store;
  char_ratio_estimator estimator;
  // Also under the cost model: it decides before storing, and a refused
  // write does not change its decision (the same output pays next turn).
  const auto mode = GENERATE(inject_mode::always, inject_mode::cost);
  offload_config cfg;
  cfg.inject = mode;
  offload_engine engine(cfg, store, estimator);
  std::string big(40000, 'k');
  auto result = engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), chat_body({big}), "t");
  CHECK(result.report.offloads.empty());
  CHECK(result.report.store_failures == 1);
  REQUIRE(result.report.fates.size() == 1);
  CHECK(result.report.fates[0] == output_fate::store_failed);
  CHECK(result.report.tool_injected);  // read_blob stays offered: the prefix does not flip next turn
  if (mode == inject_mode::cost) CHECK(result.report.offer_reason == "output_pays");
  CHECK(nlohmann::json::parse(result.body)["messages"][2]["content"] == big);  // every byte still there
}

TEST_CASE("with the exact tokenizer, an output dense in tokens is offloaded by its real count, counted once") {
  // "1 2 3 ..." is one token per byte in o200k_base: 3,000 bytes are ~3,000
  // tokens, above the 2,500 threshold, though characters/2 would skip it.
  std::string dense;
  for (int i = 0; dense.size() < 3000; ++i) dense += std::to_string(i % 10) + " ";
  auto tokenizer = tokens::make_token_estimator("o200k", nullptr);
  REQUIRE(tokenizer);
  const auto exact = tokenizer->estimate(dense, content_kind::text);
  REQUIRE(exact > 2500);

  memory_blob_store store([] { return std::int64_t(1); });
  offload_engine engine({}, store, *tokenizer);
  auto body = chat_body({dense});
  auto first = engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), body, "t");
  REQUIRE(first.report.offloads.size() == 1);
  CHECK(first.report.offloads[0].tokens_before == exact);
  CHECK(first.report.offloads[0].tokens_after > 0);
  CHECK(first.report.offloads[0].tokens_after < 1500);
  CHECK(first.report.tool_tokens > 20);  // the read_blob definition, counted by the same tokenizer

  fixture estimated;
  CHECK(estimated.engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), body, "t").report.offloads.empty());

  // The next turn counts nothing again: the same figures come from the cache.
  auto second = engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), body, "t");
  REQUIRE(second.report.offloads.size() == 1);
  CHECK(second.report.offloads[0].tokens_before == exact);
  CHECK(second.report.offloads[0].tokens_after == first.report.offloads[0].tokens_after);
  CHECK(second.body == first.body);
}

namespace {

// Counts what it is asked to tokenize.
class counting_estimator final : public token_estimator {
 public:
  std::uint64_t estimate(std::string_view bytes, content_kind kind) const override {
    largest = std::max(largest, bytes.size());
    return inner.estimate(bytes, kind);
  }
  std::uint64_t max_tokens(std::size_t bytes) const override { return inner.max_tokens(bytes); }
  std::string_view name() const override { return "counting"; }
  bool exact() const override { return false; }
  mutable std::size_t largest = 0;
  char_ratio_estimator inner;
};

}  // namespace

TEST_CASE("an output too large to store is never tokenized") {
  offload_config cfg;
  cfg.max_blob_bytes = 10000;
  std::int64_t now = 1;
  memory_blob_store store{[&] { return now; }};
  counting_estimator estimator;
  offload_engine engine(cfg, store, estimator);
  auto result = engine.rewrite(endpoint_for("POST", "/v1/chat/completions")->wire(), chat_body({std::string(400000, 'y')}), "t");
  CHECK(result.report.skipped_too_large == 1);
  CHECK(estimator.largest < 10000);  // was: the whole 400 KB counted, then refused by the store
}

TEST_CASE("an output is offloaded when its tokens exceed the threshold, and not when they equal it", "[offload]") {
  std::string output;
  for (int i = 0; i < 60; ++i) output += "line " + std::to_string(i) + " of the output\n";
  char_ratio_estimator e;
  const auto tokens = shape_of(output, e).tokens;
  REQUIRE(e.max_tokens(output.size()) > tokens);  // the cheap pre-check lets it through to the count
  for (const auto& [threshold, offloaded] : {std::pair{tokens, false}, std::pair{tokens - 1, true}}) {
    CAPTURE(tokens, threshold);
    offload_config cfg;
    cfg.threshold_tokens = threshold;
    cfg.min_offload_bytes = 16;
    fixture f(cfg);
    auto r = f.engine.rewrite(endpoint_named("chat")->wire(), chat_body({output}), "t");
    CHECK(r.report.offloads.size() == (offloaded ? 1u : 0u));
  }
}
