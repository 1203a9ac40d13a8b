// Replay reuses what each turn learned for the next (turn_stream.hpp): every
// figure must be the one replaying each turn whole gives, and a turn's work
// must follow what it adds, not the conversation's length.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "rewrite/tokens/bpe_tokenizer.hpp"

using namespace gistproxy::rewrite;
using OJ = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Words, not one long run: the tokenizer meets real pieces.
std::string words(unsigned seed, std::size_t bytes) {
  static const char* vocabulary[] = {"the", "replay", "body", "tokens", "offload", "cache", "\n", "  ", "error:",
                                     "{\"a\": 1}", "x_17", "déjà", "12345", "don't", "\t", "/usr/lib", "\"q\""};
  std::string s;
  for (unsigned i = seed; s.size() < bytes; i = i * 1103515245u + 12345u) {
    s += vocabulary[(i >> 16) % (sizeof vocabulary / sizeof *vocabulary)];
    s += ' ';
  }
  return s;
}

std::size_t output_size(int turn) { return turn % 9 == 4 ? 12000 + std::size_t(turn) * 37 : 40 + std::size_t(turn % 7) * 30; }

// A Codex rollout: Responses items, a large output now and then.
std::string codex_rollout(int turns) {
  std::string out = R"({"timestamp":"t","type":"session_meta","payload":{"id":"s","instructions":"be brief"}})" "\n";
  out += R"({"timestamp":"t","type":"turn_context","payload":{"model":"gpt-5-codex"}})" "\n";
  auto item = [&](const OJ& p) { out += OJ{{"timestamp", "t"}, {"type", "response_item"}, {"payload", p}}.dump() + "\n"; };
  item({{"type", "message"}, {"role", "user"}, {"content", {{{"type", "input_text"}, {"text", words(1, 300)}}}}});
  for (int i = 0; i < turns; ++i) {
    const auto id = "call_" + std::to_string(i);
    item({{"type", "reasoning"}, {"summary", OJ::array()}, {"encrypted_content", "gAAA" + id}});
    item({{"type", "function_call"}, {"name", i % 3 ? "shell" : "apply_patch"}, {"call_id", id}, {"arguments", "{}"}});
    item({{"type", "function_call_output"}, {"call_id", id}, {"output", words(unsigned(i), output_size(i))}});
  }
  return out;
}

// A Cline task history: tool results as user text.
std::string cline_history(int turns) {
  auto text = [](const std::string& s) { return OJ::array({{{"type", "text"}, {"text", s}}}); };
  OJ h = OJ::array({{{"role", "user"}, {"content", text("<task>\n" + words(2, 200) + "\n</task>")}}});
  for (int i = 0; i < turns; ++i) {
    h.push_back({{"role", "assistant"}, {"content", text("<read_file><path>f" + std::to_string(i) + "</path></read_file>")}});
    h.push_back({{"role", "user"}, {"content", text("[read_file for 'f" + std::to_string(i) + "'] Result:\n" +
                                                   words(unsigned(i) + 7, output_size(i)))}});
  }
  h.push_back({{"role", "assistant"}, {"content", text("done")}});
  return h.dump();
}

// A SWE-agent trajectory: chat messages, its tools after the list.
std::string swe_agent(int turns) {
  OJ history = OJ::array({{{"role", "system"}, {"content", words(3, 900)}}, {{"role", "user"}, {"content", "fix it"}}});
  for (int i = 0; i < turns; ++i) {
    const auto id = "c" + std::to_string(i);
    history.push_back({{"role", "assistant"}, {"content", "look"},
                       {"tool_calls", {{{"id", id}, {"type", "function"}, {"function", {{"name", "cat"}, {"arguments", "{}"}}}}}}});
    history.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", words(unsigned(i) * 3, output_size(i))}});
  }
  history.push_back({{"role", "assistant"}, {"content", "done"}});
  return OJ{{"history", history}}.dump();
}

struct variant {
  const char* name;
  offload_config cfg;
};

std::vector<variant> variants() {
  std::vector<variant> v;
  v.push_back({"inject always", {}});
  offload_config cost;
  cost.inject = inject_mode::cost;
  v.push_back({"inject auto", cost});
  offload_config cline;
  cline.text_tool_results = text_results::cline;
  cline.threshold_tokens = 1000;
  v.push_back({"cline text results", cline});
  offload_config age;
  age.inject = inject_mode::cost;
  age.age.trigger_tokens = 6000;
  age.age.threshold_tokens = 20;
  age.age.keep_tokens = 2000;
  age.age.step_tokens = 3000;
  age.age.decide = age_config::gate::tokens;
  v.push_back({"age offload", age});
  offload_config budget;
  budget.budget_tokens = 9000;
  v.push_back({"budget", budget});
  return v;
}

replay_stats replay_with(const recorded_trace& t, const offload_config& cfg, const token_estimator& estimator,
                         bool reuse) {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  offload_engine engine(cfg, store, estimator, [] { return std::uint64_t(1); });
  replayer r(engine, store, estimator);
  r.reuse_turns(reuse);
  return r.run(t, "t");
}

void check_same(const replay_stats& a, const replay_stats& b) {
  CHECK(a.turns == b.turns);
  CHECK(a.conversations == b.conversations);
  CHECK(a.tokens_before == b.tokens_before);
  CHECK(a.tokens_after == b.tokens_after);
  CHECK(a.offloads == b.offloads);
  CHECK(a.distinct_blobs == b.distinct_blobs);
  CHECK(a.offloaded_bytes == b.offloaded_bytes);
  CHECK(a.stored_bytes == b.stored_bytes);
  CHECK(a.unparsable == b.unparsable);
  CHECK(a.prefix_pairs == b.prefix_pairs);
  CHECK(a.prefix_stable_before == b.prefix_stable_before);
  CHECK(a.prefix_stable_after == b.prefix_stable_after);
  CHECK(a.cache_read_tokens_before == b.cache_read_tokens_before);
  CHECK(a.cache_read_tokens_after == b.cache_read_tokens_after);
  CHECK(a.cost_usd_before == b.cost_usd_before);
  CHECK(a.cost_usd_after == b.cost_usd_after);
  CHECK(a.priced_turns == b.priced_turns);
  CHECK(a.rebuilt_requests == b.rebuilt_requests);
  CHECK(a.not_offloaded == b.not_offloaded);
  REQUIRE(a.by_tool.size() == b.by_tool.size());
  for (const auto& [tool, s] : a.by_tool) {
    INFO(tool);
    CHECK(s.outputs == b.by_tool.at(tool).outputs);
    CHECK(s.offloaded == b.by_tool.at(tool).offloaded);
    CHECK(s.tokens_saved == b.by_tool.at(tool).tokens_saved);
  }
}

std::vector<std::pair<std::string, std::string>> traces() {
  std::vector<std::pair<std::string, std::string>> out = {
      {"generated codex", codex_rollout(60)}, {"generated cline", cline_history(60)}, {"generated swe-agent", swe_agent(40)}};
  for (const auto& e : fs::directory_iterator(fs::path(GISTPROXY_FIXTURES) / "traces"))
    if (e.is_regular_file() && e.path().extension() != ".md" && e.path().extension() != ".py")
      out.emplace_back(e.path().filename().string(), slurp(e.path()));
  return out;
}

}  // namespace

TEST_CASE("replay: reusing each turn's work gives every figure replaying turns whole gives", "[replay]") {
  std::string error;
  const auto o200k = tokens::builtin_tokenizer("o200k_base", &error);
  REQUIRE(o200k);
  const char_ratio_estimator heuristic;
  for (const auto& [name, text] : traces()) {
    const auto t = read_trace(text);
    for (const auto& v : variants())
      for (const token_estimator* e : {static_cast<const token_estimator*>(o200k.get()),
                                       static_cast<const token_estimator*>(&heuristic)}) {
        INFO(name << ", " << v.name << ", " << e->name());
        const auto whole = replay_with(t, v.cfg, *e, false);
        const auto reused = replay_with(t, v.cfg, *e, true);
        check_same(reused, whole);
      }
  }
}

// Each turn's tokenizer reading and body writing are bounded by the bytes it
// adds (its new items) and a constant (a mark's spacing, the frame), never
// by the conversation so far: 200 turns re-sending a growing history.
TEST_CASE("replay: a turn's work follows what it adds and not the conversation's length", "[replay]") {
  std::string error;
  const auto o200k = tokens::builtin_tokenizer("o200k_base", &error);
  REQUIRE(o200k);
  for (const auto& text : {codex_rollout(200), cline_history(200)}) {
    const auto t = read_trace(text);
    REQUIRE(t.rebuilt);
    memory_blob_store store{[] { return std::int64_t(1000); }};
    offload_config cfg;
    cfg.text_tool_results = text_results::cline;
    offload_engine engine(cfg, store, *o200k, [] { return std::uint64_t(1); });
    replayer r(engine, store, *o200k);
    replay_work work;
    r.count_work(&work);
    replay_work before;
    std::size_t previous_size = 0, previous_added = 0, turn = 0, large = 0;
    r.run(t, "t", [&](const replayed_request& q) {
      const auto size = q.recorded->body().size();
      const auto added = size > previous_size ? size - previous_size : size;
      INFO("turn " << turn << ": " << size << " bytes, " << added << " added");
      CHECK(work.bytes_built - before.bytes_built <= added + 256);
      // Body and forwarded body each: the new bytes, a mark's spacing and the
      // tokenizer's margin; and the cached prefix's parts new to it (the
      // previous turn's new items, as sent and as forwarded).
      CHECK(work.bytes_counted - before.bytes_counted <= 2 * added + 2 * previous_added + 2 * (4096 + 64) + 1024);
      large += size > 200000;
      before = work;
      previous_size = size;
      previous_added = added;
      ++turn;
    });
    CHECK(turn == t.requests.size());
    CHECK(large > 20);  // the bound was met where whole counting would have read far more
  }
}
