// Format detection as a matrix: one sample per format (the committed agent
// sessions where there is one, small hand-written files otherwise), and no
// format's detection claims another format's sample, except the two generic
// fallbacks (a message list, request bodies) that most formats also are.
// Then the realistic examples replay with the number of turns their agents
// made, and --format forces a reader.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "tests/support/fixture_files.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path traces = fs::path(GISTPROXY_FIXTURES) / "traces";

std::string slurp(const fs::path& p) { return gistproxy::testing::read_whole_file(p); }

std::string jsonl(const std::vector<J>& lines) {
  std::string out;
  for (const auto& l : lines) out += l.dump() + "\n";
  return out;
}

// format name -> a sample of it
std::map<std::string, std::string> samples() {
  std::map<std::string, std::string> s;
  auto file = [&](const char* format, const char* name) { s[format] = slurp(traces / name); };
  file("gistproxy-recording", "gistproxy-recording__openhands-astropy.jsonl");
  file("claude-code", "claude-code__spotter_agent-a881341.jsonl");
  file("openhands", "openhands__astropy-12907-call2.json");
  file("swe-agent", "swe-agent__flash.traj");
  file("vcr", "vcr__pydantic-ai_web_fetch_tool.yaml");
  file("codex", "codex__rollout-2026-11-20T09-00-00-0199a1f2.jsonl");
  file("pi", "pi__session-branched.jsonl");
  file("cline", "cline__api_conversation_history.json");
  file("openhands-output", "openhands-output__output.jsonl");
  file("gemini-cli", "gemini-cli__checkpoint-replay-fix.json");
  file("mini-swe-agent", "mini-swe-agent__astropy-12907.traj.json");
  file("tau-bench", "tau-bench__gpt-4o-airline-first3.json");
  const J chat = {{"model", "gpt-4o"}, {"messages", J::array({{{"role", "user"}, {"content", "hi"}}})}};
  const std::string url = "https://api.openai.com/v1/chat/completions";
  s["har"] = J{{"log", {{"version", "1.2"}, {"entries", J::array({{{"request", {{"method", "POST"}, {"url", url},
                                                                                 {"postData", {{"text", chat.dump()}}}}}}})}}}}.dump();
  s["claude-trace"] = jsonl({{{"request", {{"url", url}, {"body", chat}}}, {"response", {{"status_code", 200}}}}});
  s["inspect"] = J{{"eval", {{"task", "t"}}},
                   {"samples", J::array({{{"events", J::array({{{"event", "model"}, {"call", {{"request", chat}}}}})}}})}}.dump();
  s["messages"] = J::array({{{"role", "user"}, {"content", "hi"}}, {{"role", "assistant"}, {"content", "yo"}}}).dump();
  s["request-bodies"] = jsonl({chat, chat});
  return s;
}

}  // namespace

TEST_CASE("every format has a sample, and each sample is read as its own format") {
  auto all = samples();
  REQUIRE(all.size() == trace_formats().size());
  for (const auto& f : trace_formats()) {
    INFO(f.name);
    REQUIRE(all.count(std::string(f.name)));
    CHECK(read_trace(all[std::string(f.name)]).format == f.name);
  }
}

TEST_CASE("no two formats claim the same file: every pair, in both directions") {
  const std::set<std::string> generic = {"messages", "request-bodies"};
  for (const auto& [format, text] : samples()) {
    INFO(format);
    auto claims = formats_claiming(text);
    REQUIRE_FALSE(claims.empty());
    CHECK(claims.front() == format);  // detection order picks it
    for (const auto& other : claims)
      if (other != format) {
        INFO("also claimed by " << other);
        CHECK(generic.count(other));  // only the fallbacks, which come last
      }
  }
}

TEST_CASE("realistic examples replay with the number of turns their agents made") {
  struct expected {
    const char* file;
    const char* format;
    std::size_t turns;
    std::size_t conversations;
  };
  // Turns counted from the files themselves: assistant messages (mini-swe-agent
  // 64, tau-bench 15 + 5 + 11, Cline 7), model turns (Gemini), points where the
  // model starts answering (Codex: 5 shell calls, apply_patch, a message; then
  // a call and a message), agent steps plus finish (OpenHands: 4 + 1, 3 + 1).
  const expected cases[] = {
      {"mini-swe-agent__astropy-12907.traj.json", "mini-swe-agent", 64, 1},
      {"tau-bench__gpt-4o-airline-first3.json", "tau-bench", 31, 3},
      {"codex__rollout-2026-11-20T09-00-00-0199a1f2.jsonl", "codex", 9, 1},
      {"pairs/pi__session.jsonl", "pi", 10, 1},
      {"pi__transcript.json", "pi", 3, 1},
      {"cline__api_conversation_history.json", "cline", 7, 1},
      {"openhands-output__output.jsonl", "openhands-output", 9, 2},
      {"gemini-cli__checkpoint-replay-fix.json", "gemini-cli", 6, 1},
      {"gemini-cli__session-2026-11-20T09-00-1f2e3d4c.json", "gemini-cli", 4, 1},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    auto t = read_trace(slurp(traces / c.file));
    CHECK(t.format == c.format);
    CHECK(t.rebuilt);
    CHECK(t.requests.size() == c.turns);
    memory_blob_store store([] { return std::int64_t(1000); });
    char_ratio_estimator estimator;
    offload_config cfg;
    cfg.text_tool_results = text_results::cline;
    offload_engine engine(cfg, store, estimator, [] { return std::uint64_t(1); });
    auto s = replayer(engine, store, estimator).run(t, "t");
    CHECK(s.turns == c.turns);
    CHECK(s.conversations == c.conversations);
    CHECK(s.prefix_stable_before == s.turns - s.conversations);  // the agents resend their history unchanged
  }
}

TEST_CASE("a forced format (replay --format) is read over detection, and a file without the shape it reads is refused") {
  const auto mini = slurp(traces / "mini-swe-agent__astropy-12907.traj.json");
  auto as_body = read_trace(mini, "request-bodies");  // the old misreading, now only on request
  CHECK(as_body.format == "request-bodies");
  CHECK(as_body.requests.size() == 1);

  const auto cline = slurp(traces / "cline__api_conversation_history.json");
  auto as_messages = read_trace(cline, "messages");
  CHECK(as_messages.format == "messages");
  CHECK(as_messages.requests.size() == 7);

  CHECK_THROWS_WITH(read_trace(cline, "har"), Catch::Contains("not a har trace: expected a JSON document with log.entries"));
  CHECK_THROWS_WITH(read_trace(cline, "tau-bench"), Catch::Contains("not a tau-bench trace"));
  CHECK_THROWS_WITH(read_trace(mini, "vcr"), Catch::Contains("not a vcr trace"));
  CHECK_THROWS_WITH(read_trace(mini, "no-such-format"), Catch::Contains("unknown trace format") && Catch::Contains("mini-swe-agent"));
}

TEST_CASE("an unrecognised file is told what each format is identified by") {
  try {
    read_trace(R"({"hello": "world"})");
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("unrecognised JSON trace") != std::string::npos);
    for (const auto& f : trace_formats()) CHECK(what.find(std::string(f.name) + ": " + std::string(f.looks_for)) != std::string::npos);
  }
}

TEST_CASE("forcing any reader on any format's file reads it or refuses it, never worse") {
  for (const auto& [format, text] : samples())
    for (const auto& f : trace_formats()) {
      INFO(format << " read as " << f.name);
      try {
        auto t = read_trace(text, f.name);
        CHECK(t.format == f.name);
      } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find("not a " + std::string(f.name)) != std::string::npos);
      }
    }
}
