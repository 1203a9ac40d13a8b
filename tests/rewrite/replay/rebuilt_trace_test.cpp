// A trace rebuilt from a message list keeps each message once: a turn's body
// is made when it is replayed, byte for byte what dumping the whole request
// would give (keeping every turn's body cost the square of the conversation).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "rewrite/replay/trace_readers.hpp"

using namespace gistproxy::rewrite;
using OJ = nlohmann::ordered_json;

namespace {

OJ text_blocks(const std::string& s) { return OJ::array({{{"type", "text"}, {"text", s}}}); }

OJ cline_history(int turns) {
  OJ h = OJ::array({{{"role", "user"}, {"content", text_blocks("<task>fix the build</task>")}}});
  for (int i = 0; i < turns; ++i) {
    h.push_back({{"role", "assistant"}, {"content", text_blocks("<read_file><path>f" + std::to_string(i) + "</path></read_file>")}});
    h.push_back({{"role", "user"}, {"content", text_blocks("[read_file] Result: line " + std::to_string(i) + " \"quoted\" \\u00e9")}});
  }
  h.push_back({{"role", "assistant"}, {"content", text_blocks("done")}});
  return h;
}

}  // namespace

TEST_CASE("a rebuilt turn's body is byte for byte the whole request dumped") {
  const auto history = cline_history(3);
  auto t = read_trace(history.dump());
  REQUIRE(t.format == "cline");
  REQUIRE(t.requests.size() == 4);
  for (std::size_t k = 0; k < t.requests.size(); ++k) {
    OJ list = OJ::array();
    for (std::size_t i = 0; i < 2 * k + 1; ++i)
      list.push_back({{"role", history[i]["role"]}, {"content", history[i]["content"]}});
    OJ whole = {{"model", "unknown"}, {"max_tokens", 8192}, {"messages", list}};
    CHECK(t.requests[k].body() == whole.dump());
  }
}

TEST_CASE("members after the list and a frame that changes between turns") {
  recorded_trace built;
  trace_readers::conversation_builder conversation(built, endpoint_named("chat"));
  conversation.add({{"role", "user"}, {"content", "go"}});
  conversation.request({{"model", "m"}}, {{"tools", OJ::array({{{"type", "function"}}})}, {"n", 1}});
  conversation.add({{"role", "assistant"}, {"content", "a"}});
  conversation.request(OJ::object());
  REQUIRE(built.requests.size() == 2);
  CHECK(built.rebuilt);
  CHECK(built.requests[0].body() == R"({"model":"m","messages":[{"role":"user","content":"go"}],"tools":[{"type":"function"}],"n":1})");
  CHECK(built.requests[1].body() == R"({"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"a"}]})");

  // Claude Code's model can change from turn to turn.
  std::string jsonl;
  auto line = [&](const std::string& type, const std::string& id, const std::string& model, const std::string& text) {
    OJ m = {{"role", type}, {"content", text}};
    if (!id.empty()) {
      m["id"] = id;
      m["model"] = model;
    }
    jsonl += OJ{{"type", type}, {"sessionId", "s"}, {"message", m}}.dump() + "\n";
  };
  line("user", "", "", "hi");
  line("assistant", "m1", "claude-a", "one");
  line("user", "", "", "more");
  line("assistant", "m2", "claude-b", "two");
  auto c = read_trace(jsonl);
  REQUIRE(c.format == "claude-code");
  REQUIRE(c.requests.size() == 2);
  CHECK(c.requests[0].body() == R"({"model":"claude-a","max_tokens":32000,"messages":[{"role":"user","content":"hi"}]})");
  CHECK(c.requests[1].body() ==
        R"({"model":"claude-b","max_tokens":32000,"messages":[{"role":"user","content":"hi"},)"
        R"({"role":"assistant","content":"one"},{"role":"user","content":"more"}]})");
  CHECK(c.requests[0].frame != c.requests[1].frame);
  CHECK(c.requests[0].rebuilt_items == c.requests[1].rebuilt_items);
}

TEST_CASE("a 5,000-turn history keeps each message once, whatever the number of turns") {
  const auto history = cline_history(5000);
  const auto text = history.dump();
  auto t = read_trace(text);
  REQUIRE(t.requests.size() == 5001);
  const auto* items = t.requests.front().rebuilt_items.get();
  REQUIRE(items);
  std::size_t kept = 0;
  for (const auto& r : t.requests) {
    CHECK(r.rebuilt_items.get() == items);  // one list shared by every turn
    CHECK(r.recorded_body.empty());
  }
  for (const auto& item : *items) kept += item.size();
  CHECK(items->size() == history.size());
  CHECK(kept < text.size());  // linear in the trace, not its square

  // Replayed whole, turn by turn (a shorter one: replay's time is the square of
  // a conversation, as serving it is): the last turn carries every message but the last.
  const auto shorter = cline_history(300);
  t = read_trace(shorter.dump());
  memory_blob_store store([] { return std::int64_t(1000); });
  char_ratio_estimator estimator;
  offload_engine engine(offload_config{}, store, estimator, [] { return std::uint64_t(1); });
  std::size_t last_size = 0;
  auto s = replayer(engine, store, estimator).run(t, "t", [&](const replayed_request& r) { last_size = r.forwarded.size(); });
  CHECK(s.turns == 301);
  CHECK(s.rebuilt_requests == 301);
  CHECK(last_size > shorter.dump().size() - 200);
}

TEST_CASE("a session fed a trace in parts measures it as one") {
  const auto history = cline_history(4);
  auto whole = read_trace(history.dump());
  memory_blob_store store([] { return std::int64_t(1000); });
  char_ratio_estimator estimator;
  offload_engine engine(offload_config{}, store, estimator, [] { return std::uint64_t(1); });
  replayer r(engine, store, estimator);
  auto once = r.run(whole, "t");

  replay_session session(r, "t");
  recorded_trace first = whole, second = whole;
  first.requests.resize(2);
  second.requests.erase(second.requests.begin(), second.requests.begin() + 2);
  session.feed(first);
  session.feed(second);
  auto parts = session.finish();
  CHECK(parts.turns == once.turns);
  CHECK(parts.conversations == 1);
  CHECK(parts.prefix_pairs == once.prefix_pairs);  // the conversation continues across parts
  CHECK(parts.tokens_before == once.tokens_before);
  CHECK(parts.rebuilt_requests == once.rebuilt_requests);
}
