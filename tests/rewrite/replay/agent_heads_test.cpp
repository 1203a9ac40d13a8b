// Requests rebuilt from a transcript lack the agent's tools and system
// prompt; replay assumes the head the format's estimate (or the flag) gives,
// and says which and why.
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

std::string prose(unsigned seed, std::size_t bytes) {
  static const char* words[] = {"the", "parser", "reads", "each", "line", "and", "returns", "an", "error", "when",
                                "value", "is", "missing", "config", "file", "42", "path", "/src/main.cpp"};
  std::string s;
  for (unsigned i = seed; s.size() < bytes; i = i * 1103515245u + 12345u) {
    s += words[(i >> 16) % (sizeof words / sizeof *words)];
    s += (i >> 8) % 11 ? " " : "\n";
  }
  return s;
}

// A Claude Code session as ~/.claude/projects keeps it: a short request, a
// long plan, then file reads whose outputs are just over the threshold. Late
// in a long conversation, none pays for read_blob's arrival on its own.
std::string claude_code_session(int reads) {
  std::string out;
  auto line = [&](const OJ& l) { out += l.dump() + "\n"; };
  line({{"type", "user"}, {"sessionId", "s1"}, {"message", {{"role", "user"}, {"content", "fix the parser"}}}});
  line({{"type", "assistant"}, {"sessionId", "s1"},
        {"message", {{"role", "assistant"}, {"id", "msg_plan"}, {"model", "claude-sonnet-4-5"}, {"content", prose(1, 60000)}}}});
  for (int i = 0; i < reads; ++i) {
    const auto id = "toolu_" + std::to_string(i);
    line({{"type", "assistant"}, {"sessionId", "s1"},
          {"message", {{"role", "assistant"}, {"id", "msg_" + std::to_string(i)}, {"model", "claude-sonnet-4-5"},
                       {"content", {{{"type", "tool_use"}, {"id", id}, {"name", "Read"}, {"input", {{"file_path", "f"}}}}}}}}});
    line({{"type", "user"}, {"sessionId", "s1"},
          {"message", {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", id},
                                                      {"content", prose(unsigned(i) + 2, 16000)}}}}}}});
  }
  line({{"type", "assistant"}, {"sessionId", "s1"},
        {"message", {{"role", "assistant"}, {"id", "msg_end"}, {"model", "claude-sonnet-4-5"}, {"content", "done"}}}});
  return out;
}

replay_stats replay_with_heads(const recorded_trace& t, const head_policy& heads, const token_estimator& e) {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  offload_config cfg;
  cfg.inject = inject_mode::cost;  // --inject-read-blob=auto, the default
  offload_engine engine(cfg, store, e, [] { return std::uint64_t(1); });
  replayer r(engine, store, e);
  replay_session session(r, "t");
  session.assume_heads(heads);
  session.feed(t);
  return session.finish();
}

std::uint64_t saved(const replay_stats& s) { return s.tokens_before - s.tokens_after; }

}  // namespace

TEST_CASE("replay: a Claude Code transcript with its agent's head assumed saves what live traffic would", "[replay]") {
  std::string error;
  const auto o200k = tokens::builtin_tokenizer("o200k_base", &error);
  REQUIRE(o200k);
  const auto t = read_trace(claude_code_session(12));
  REQUIRE(t.format == "claude-code");

  const auto none = replay_with_heads(t, {0, &agent_heads::builtin()}, *o200k);
  const auto assumed = replay_with_heads(t, {std::nullopt, &agent_heads::builtin()}, *o200k);
  // Without a head, read_blob's definition costs more than any output saves there.
  CHECK(none.offloads == 0);
  CHECK(none.not_offloaded.at("not_worth_it") == 12);
  // With Claude Code's own head, the definition is a rounding error of it.
  CHECK(assumed.offloads > 12);
  CHECK(saved(assumed) > saved(none) + assumed.tokens_before / 4);
  CHECK(assumed.saved_share() > none.saved_share() + 0.25);
  // The head adds what the agent sent, about its estimate per request.
  const auto* estimate = agent_heads::builtin().find("claude-code");
  REQUIRE(estimate);
  const auto per_turn = (assumed.tokens_before - none.tokens_before) / assumed.turns;
  CHECK(per_turn > estimate->tokens * 95 / 100);
  CHECK(per_turn < estimate->tokens * 105 / 100);

  REQUIRE(assumed.heads.size() == 1);
  const auto& use = assumed.heads.begin()->second;
  CHECK(use.choice.reason == head_choice::why::format_default);
  CHECK(use.choice.tokens == estimate->tokens);
  CHECK(use.choice.estimate.agent == estimate->agent);
  CHECK(use.turns == assumed.turns);
  REQUIRE(none.heads.size() == 1);
  CHECK(none.heads.begin()->second.choice.reason == head_choice::why::flag);
}

TEST_CASE("replay: a head is recorded where bodies were and unknown where nothing says it", "[replay]") {
  const char_ratio_estimator e;
  const head_policy defaults{std::nullopt, &agent_heads::builtin()};
  OJ body = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  const auto as_sent = replay_with_heads(read_trace(OJ::array({body}).dump()), defaults, e);
  REQUIRE(as_sent.heads.size() == 1);
  CHECK(as_sent.heads.begin()->second.choice.reason == head_choice::why::recorded);
  CHECK(as_sent.heads.begin()->second.choice.tokens == 0);

  OJ list = OJ::array({{{"role", "user"}, {"content", "go"}}, {{"role", "assistant"}, {"content", "ok"}}});
  const auto messages = replay_with_heads(read_trace(list.dump()), defaults, e);  // a generic message list
  REQUIRE(messages.heads.size() == 1);
  CHECK(messages.heads.begin()->second.choice.reason == head_choice::why::unknown);
  CHECK(messages.heads.begin()->second.turns == 1);
  const auto flagged = replay_with_heads(read_trace(list.dump()), {5000, &agent_heads::builtin()}, e);
  CHECK(flagged.heads.begin()->second.choice.reason == head_choice::why::flag);
  CHECK(flagged.tokens_before > messages.tokens_before + 4000);
}

TEST_CASE("agent heads: the table is checked whoever wrote it", "[replay]") {
  CHECK(agent_heads::builtin().find("claude-code"));
  CHECK_FALSE(agent_heads::builtin().find("request-bodies"));
  const auto t = agent_heads::parse(R"({"heads":{"codex":{"agent":"Codex","tokens":1234,"as_of":"2026-01"}}})");
  REQUIRE(t.find("codex"));
  CHECK(t.find("codex")->tokens == 1234);
  for (const char* bad : {"", "[]", "{}", R"({"heads":[]})", R"({"heads":{"x":{"tokens":-1}}})",
                          R"({"heads":{"x":{"tokens":1e9}}})", R"({"heads":{"x":{"tokens":"many"}}})",
                          R"({"heads":{"x":7}})", R"({"heads":{"x":{"tokens":2000000}}})"}) {
    INFO(bad);
    CHECK_THROWS_AS(agent_heads::parse(bad), std::runtime_error);
  }
}
