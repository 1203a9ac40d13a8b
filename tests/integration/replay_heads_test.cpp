// Replay predicts what the live proxy saves, even from files that do not
// record the head (issue 39): each pair in tests/fixtures/traces/pairs is one
// conversation of a real agent CLI captured twice, as `serve --record` saw its
// requests (tools and system prompt included) and as the agent's own session
// file keeps it (without them; OpenHands: one real run, see
// pairs/PROVENANCE.md). Replayed at defaults, the session file gets the
// agent's head from docs/agent_heads.json; its savings must agree with the
// recording's within 5 points. The pairs must also tell heads apart (a
// session file replayed without a head is off by more than that), or the
// agreement would prove nothing.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/integration/harness.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;

namespace {

const std::filesystem::path pairs = std::filesystem::path(GISTPROXY_FIXTURES) / "traces" / "pairs";

struct capture_pair {
  const char* agent;
  const char* session;    // the agent's own file: no head
  const char* recording;  // the requests as sent
};
const capture_pair captured[] = {
    {"claude-code", "claude-code__session.jsonl", "claude-code__session.recording.jsonl"},
    {"codex", "codex__session-rollout.jsonl", "codex__session.recording.jsonl"},
    // Its largest output is about 17,500 tokens. The live proxy used to
    // offload it (the recording replayed to 23.4 %) where the rollout said
    // nothing pays: the cost model placed outputs by their byte offset, and
    // Codex sends `input` before `tools`, so the tools were left out of the
    // prefix an offload rewrites. Placed in cache order, both say 0.0 %.
    {"codex-b", "codex__session-b-rollout.jsonl", "codex__session-b.recording.jsonl"},
    // A trajectory format: one real OpenHands run's calls as sent (its
    // llm_completions) and the same run as output.jsonl keeps it
    // (make_openhands_pair.py). A small head (about 1,170 tokens) on large
    // outputs: 67.1 % as sent, 72.5 % without a head, 67.1 % with it.
    {"openhands", "openhands__astropy-12907.output.jsonl", "openhands__astropy-12907.completions.jsonl"},
};

nlohmann::json replay_json(const std::string& file, const std::vector<std::string>& flags = {}) {
  std::vector<std::string> argv = {gistproxy_binary(), "replay", "--json"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back((pairs / file).string());
  child_process p(argv);
  REQUIRE(p.wait(std::chrono::seconds(60)) == 0);
  const auto out = p.output();
  return nlohmann::json::parse(out.substr(out.find('{')));
}

double saved(const nlohmann::json& j) { return j.value("saved_percent", -100.0); }

}  // namespace

TEST_CASE("a session file replayed at defaults saves what its captured requests save within 5 points", "[replay][heads]") {
  for (const auto& pair : captured) {
    INFO(pair.agent);
    const auto recorded = replay_json(pair.recording);
    const auto session = replay_json(pair.session);
    REQUIRE(recorded["heads"].size() == 1);
    CHECK(recorded["heads"][0]["assumed"] == "recorded");
    REQUIRE(session["heads"].size() == 1);
    CHECK(session["heads"][0]["assumed"] == "format default");
    CHECK(session["turns"] == recorded["turns"]);
    INFO("recording saves " << saved(recorded) << "%, session file " << saved(session) << "%");
    CHECK(std::abs(saved(session) - saved(recorded)) <= 5.0);
  }
}

TEST_CASE("the capture pairs tell heads apart", "[replay][heads]") {
  for (const auto& pair : captured) {
    INFO(pair.agent);
    const auto recorded = replay_json(pair.recording);
    const auto headless = replay_json(pair.session, {"--assume-head-tokens", "0"});
    INFO("recording saves " << saved(recorded) << "%, session file without a head " << saved(headless) << "%");
    CHECK(std::abs(saved(headless) - saved(recorded)) > 5.0);
  }
}

// Claude Code 2.1's first system block is "x-anthropic-billing-header: …;
// cch=…;", a checksum that differs on every request. Read as prompt it made
// each of the capture's ten requests a conversation of its own, with nothing
// cached (cache-read share 0 %, $2.43 before gistproxy where the provider
// bills $0.99).
TEST_CASE("Claude Code's capture replays as conversations that cache although its billing block changes every request",
          "[replay][heads]") {
  const auto recorded = replay_json("claude-code__session.recording.jsonl");
  CHECK(recorded["turns"] == 10);
  CHECK(recorded["conversations"].get<int>() <= 3);
  CHECK(recorded["prefix_pairs"].get<int>() >= 7);
  CHECK(recorded["cache_read_share_before"].get<double>() > 0.5);
  CHECK(recorded["conversations_costing_more"] == 0);
  CHECK(recorded["cost_usd_after"].get<double>() < recorded["cost_usd_before"].get<double>());
}
