// The pi coding agent's session files and documents of its messages: one
// request per assistant message, on the path to the last entry only, in the
// API each turn was sent to, tool results linked to their calls byte for byte.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>

#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/replay/agent_heads.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "rewrite/replay/trace_formats.hpp"
#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "tests/support/fixture_files.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;
using gistproxy::testing::read_fixture;

namespace {

std::string jsonl(const std::vector<J>& lines) {
  std::string out;
  for (const auto& l : lines) out += l.dump() + "\n";
  return out;
}

J body(const recorded_trace& t, std::size_t k) { return J::parse(t.requests.at(k).body()); }

bool any_note(const recorded_trace& t, const std::string& part) {
  for (const auto& n : t.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

const J header = {{"type", "session"}, {"version", 3}, {"id", "s1"}, {"timestamp", "2026-11-29T10:00:00.000Z"}, {"cwd", "/p"}};

J entry(const std::string& id, const J& parent, J message) {
  return {{"type", "message"}, {"id", id}, {"parentId", parent}, {"timestamp", "t"}, {"message", std::move(message)}};
}

J assistant(const std::string& api, const J& content, const std::string& stop = "stop") {
  return {{"role", "assistant"}, {"content", content}, {"api", api}, {"provider", "p"}, {"model", "m-" + api}, {"stopReason", stop}};
}

J tool_call(const std::string& id) { return {{"type", "toolCall"}, {"id", id}, {"name", "bash"}, {"arguments", {{"command", "ls"}}}}; }

J tool_result(const std::string& id, const std::string& text) {
  return {{"role", "toolResult"}, {"toolCallId", id}, {"toolName", "bash"}, {"content", J::array({{{"type", "text"}, {"text", text}}})}, {"isError", false}};
}

J user(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

// Replay at defaults (--inject-read-blob=auto) with the built-in head table.
replay_stats replay_at_defaults(const recorded_trace& t, const token_estimator& e) {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  offload_config cfg;
  cfg.inject = inject_mode::cost;
  offload_engine engine(cfg, store, e, [] { return std::uint64_t(1); });
  replayer r(engine, store, e);
  replay_session session(r, "t");
  session.assume_heads({std::nullopt, &agent_heads::builtin()});
  session.feed(t);
  return session.finish();
}

}  // namespace

TEST_CASE("a pi session and a document of pi messages are detected as pi and claimed by no other specific format") {
  for (const char* name : {"traces/pi__session-branched.jsonl", "traces/pi__transcript.json", "traces/pairs/pi__session.jsonl"}) {
    INFO(name);
    const auto claims = formats_claiming(read_fixture(name));
    REQUIRE_FALSE(claims.empty());
    CHECK(claims.front() == "pi");
    for (const auto& other : claims)
      if (other != "pi") CHECK((other == "messages" || other == "request-bodies"));
  }
}

TEST_CASE("only the path to the last entry is replayed and an abandoned branch is not") {
  const auto t = read_trace(read_fixture("traces/pi__session-branched.jsonl"));
  CHECK(t.format == "pi");
  CHECK(t.rebuilt);
  REQUIRE(t.requests.size() == 4);  // the answers on the path: c1000002 c1000004 e1000003 e1000006
  for (const auto& r : t.requests) {
    CHECK(r.api->name() == "messages");
    CHECK(r.body().find("Delete src") == std::string::npos);
    CHECK(r.body().find("rm -rf") == std::string::npos);
  }
  const auto last = body(t, 3);
  CHECK(last["model"] == "claude-sonnet-4-5");
  REQUIRE(last["messages"].size() == 8);
  CHECK(last["messages"][4]["content"][0]["text"].get<std::string>().find("The user had src deleted") != std::string::npos);
  CHECK(last["messages"][5]["content"] == "Read the README and count its lines");
  CHECK(any_note(t, "4 entries on other branches"));
  CHECK(any_note(t, "not a JSON object: skipped"));  // the partial last line
}

TEST_CASE("a tool result reaches the next request linked to its call with its bytes unchanged") {
  const auto t = read_trace(read_fixture("traces/pi__session-branched.jsonl"));
  REQUIRE(t.requests.size() == 4);
  const auto second = body(t, 1);
  REQUIRE(second["messages"].size() == 3);
  const auto& call = second["messages"][1]["content"];
  CHECK(call[0] == J{{"type", "thinking"}, {"thinking", "Use ls."}, {"signature", "EqQBsig"}});
  CHECK(call[1] == J{{"type", "tool_use"}, {"id", "toolu_01"}, {"name", "bash"}, {"input", {{"command", "ls"}}}});
  CHECK(second["messages"][2]["content"][0] ==
        J{{"type", "tool_result"}, {"tool_use_id", "toolu_01"}, {"content", "README.md\nsrc\n"}, {"is_error", false}});

  // Two results of one turn go out as one user message, in order.
  const auto results = body(t, 3)["messages"].at(7).at("content");
  REQUIRE(results.size() == 2);
  CHECK(results[0]["tool_use_id"] == "toolu_03");
  CHECK(results[0]["content"] == "# Demo\n\n\"quoted\" \\ back\u00e9\n");
  CHECK(results[1]["tool_use_id"] == "toolu_04");
}

TEST_CASE("a document of pi messages is one conversation rebuilt turn by turn") {
  const auto text = read_fixture("traces/pi__transcript.json");
  const auto t = read_trace(text);
  CHECK(t.format == "pi");
  REQUIRE(t.requests.size() == 3);
  for (const auto& r : t.requests) CHECK(r.api->name() == "responses");
  CHECK(body(t, 0) == J::parse(R"({"model":"gpt-5-mini","input":[{"role":"user","content":[{"type":"input_text","text":"What is in notes.txt?"}]}]})"));
  const auto second = body(t, 1)["input"];
  REQUIRE(second.size() == 4);
  CHECK(second[1]["type"] == "reasoning");
  CHECK(second[1]["encrypted_content"] == "gAAAA");
  CHECK(second[2] == J{{"type", "function_call"}, {"id", "fc_01"}, {"call_id", "call_01"}, {"name", "read"}, {"arguments", R"({"path":"notes.txt"})"}});
  CHECK(second[3] == J{{"type", "function_call_output"}, {"call_id", "call_01"}, {"output", "line one\nline \"two\"\n"}});
  const auto third = body(t, 2)["input"];
  REQUIRE(third.size() == 6);
  CHECK(third[4]["id"] == "msg_01");
  CHECK(third[5]["content"][0]["text"] == "Thanks");
  // Forced, and no longer one request body per file.
  CHECK(read_trace(text, "pi").requests.size() == 3);
  CHECK(read_trace(text, "request-bodies").requests.size() == 1);
}

TEST_CASE("each turn is rebuilt in the API its answer came from") {
  const auto t = read_trace(jsonl({header, entry("u1", nullptr, user("go")),
                                   entry("a1", "u1", assistant("anthropic-messages", J::array({tool_call("toolu_1")}), "toolUse")),
                                   entry("r1", "a1", tool_result("toolu_1", "out")),
                                   entry("a2", "r1", assistant("openai-completions", J::array({tool_call("call_2")}), "toolUse")),
                                   entry("r2", "a2", tool_result("call_2", "out 2")),
                                   entry("a3", "r2", assistant("bedrock-converse-stream", J::array({{{"type", "text"}, {"text", "ok"}}})))}));
  REQUIRE(t.requests.size() == 3);
  CHECK(t.requests[0].api->name() == "messages");
  CHECK(t.requests[1].api->name() == "chat");
  CHECK(t.requests[2].api->name() == "chat");
  const auto chat = body(t, 1);
  CHECK(chat["model"] == "m-openai-completions");
  CHECK(chat["messages"][1]["tool_calls"][0]["function"]["arguments"] == R"({"command":"ls"})");
  CHECK(chat["messages"][2] == J{{"role", "tool"}, {"content", "out"}, {"tool_call_id", "toolu_1"}});
  CHECK(body(t, 2)["messages"][4] == J{{"role", "tool"}, {"content", "out 2"}, {"tool_call_id", "call_2"}});
  CHECK(any_note(t, "1 turn(s) sent with bedrock-converse-stream"));
}

TEST_CASE("an errored answer is a request but not context and an unanswered call gets pi's result") {
  const auto t = read_trace(jsonl({header, entry("u1", nullptr, user("go")),
                                   entry("a1", "u1", assistant("anthropic-messages", J::array({tool_call("toolu_1")}), "error")),
                                   entry("a2", "a1", assistant("anthropic-messages", J::array({tool_call("toolu_2")}), "toolUse")),
                                   entry("u2", "a2", user("stop that")),
                                   entry("a3", "u2", assistant("anthropic-messages", J::array({{{"type", "text"}, {"text", "ok"}}})))}));
  REQUIRE(t.requests.size() == 3);
  CHECK(body(t, 1)["messages"].size() == 1);  // the errored answer is not resent
  const auto last = body(t, 2)["messages"];
  REQUIRE(last.size() == 4);
  CHECK(last[1]["content"][0]["id"] == "toolu_2");
  CHECK(last[2]["content"][0] ==
        J{{"type", "tool_result"}, {"tool_use_id", "toolu_2"}, {"content", "No result provided"}, {"is_error", true}});
  CHECK(last[3]["content"] == "stop that");
  CHECK(any_note(t, "1 errored or aborted answer(s)"));
}

TEST_CASE("after a compaction turns carry its summary and the kept entries only") {
  const J compaction = {{"type", "compaction"}, {"id", "c1"}, {"parentId", "a2"}, {"timestamp", "t"},
                        {"summary", "Earlier: the user asked twice."}, {"firstKeptEntryId", "u2"}, {"tokensBefore", 900}};
  const auto t = read_trace(jsonl({header, entry("u1", nullptr, user("first")),
                                   entry("a1", "u1", assistant("anthropic-messages", J::array({{{"type", "text"}, {"text", "one"}}}))),
                                   entry("u2", "a1", user("second")),
                                   entry("a2", "u2", assistant("anthropic-messages", J::array({{{"type", "text"}, {"text", "two"}}}))),
                                   compaction, entry("u3", "c1", user("third")),
                                   entry("a3", "u3", assistant("anthropic-messages", J::array({{{"type", "text"}, {"text", "three"}}})))}));
  REQUIRE(t.requests.size() == 3);
  const auto last = body(t, 2)["messages"];
  REQUIRE(last.size() == 4);
  CHECK(last[0]["content"][0]["text"].get<std::string>().find("<summary>\nEarlier: the user asked twice.\n</summary>") != std::string::npos);
  CHECK(last[1]["content"] == "second");
  CHECK(last[3]["content"] == "third");
  CHECK(t.requests[2].rebuilt_items != t.requests[1].rebuilt_items);  // a new conversation for replay
}

TEST_CASE("malformed and hostile entries are skipped without losing the conversation") {
  std::string text = header.dump() + "\n";
  text += "{not json\n";
  text += jsonl({entry("u1", nullptr, user("go")),
                 {{"type", "message"}, {"id", "x1"}, {"parentId", "u1"}, {"message", J::array({1, 2})}},
                 entry("x2", "x1", {{"role", 7}, {"content", {{"a", 1}}}}),
                 entry("x3", "x2", {{"role", "assistant"}, {"content", "not a list"}, {"api", 3}, {"model", J::array()}}),
                 entry("x4", "x3", {{"role", "toolResult"}, {"toolCallId", 5}, {"content", 9}, {"isError", "yes"}}),
                 entry("x5", "x4", {{"role", "user"}, {"content", J::array({1, {{"type", "text"}, {"text", 2}}, {{"type", "image"}}})}}),
                 entry("a1", "x5", assistant("anthropic-messages", J::array({{{"type", "toolCall"}, {"id", 1}, {"arguments", "x"}}, 4}))),
                 {{"type", 42}, {"id", "y1"}, {"parentId", "a1"}},
                 {{"type", "compaction"}, {"id", "y2"}, {"parentId", "y1"}, {"firstKeptEntryId", J::object()}},
                 {{"type", "context_edit"}, {"id", "y3"}, {"parentId", "y2"}, {"targetId", "u1"}, {"replacement", 3}},
                 entry("a2", "y3", assistant("google-generative-ai", J::array({{{"type", "text"}, {"text", "fine"}}})))});
  recorded_trace t;
  REQUIRE_NOTHROW(t = read_trace(text));
  CHECK(t.format == "pi");
  REQUIRE(t.requests.size() == 3);  // x3 (no API: Chat Completions), a1, a2
  for (const auto& r : t.requests) CHECK_NOTHROW(J::parse(r.body()));
  CHECK(t.requests[0].api->name() == "chat");
  CHECK(t.requests[2].api->name() == "gemini");
  CHECK(t.requests[2].target == "/v1beta/models/m-google-generative-ai:generateContent");
  CHECK(any_note(t, "line 2 is not a JSON object"));
}

TEST_CASE("a parent cycle or a lost parent ends the walk and a v1 session without ids is read in order") {
  const auto cycle = read_trace(jsonl({header, entry("u1", "a1", user("go")),
                                       entry("a1", "u1", assistant("anthropic-messages", J::array({{{"type", "text"}, {"text", "x"}}})))}));
  CHECK(cycle.requests.size() == 1);
  const auto lost = read_trace(jsonl({header, entry("u1", "gone", user("go")),
                                      entry("a1", "u1", assistant("anthropic-messages", J::array({{{"type", "text"}, {"text", "x"}}})))}));
  CHECK(lost.requests.size() == 1);
  CHECK(any_note(lost, "parent gone is not in the file"));
  J v1_header = {{"type", "session"}, {"id", "s0"}, {"timestamp", "t"}, {"cwd", "/p"}, {"provider", "anthropic"}, {"modelId", "m"}};
  J a = assistant("anthropic-messages", J::array({{{"type", "text"}, {"text", "x"}}}));
  const auto v1 = read_trace(jsonl({v1_header, {{"type", "message"}, {"message", user("one")}}, {{"type", "message"}, {"message", a}},
                                    {{"type", "message"}, {"message", user("two")}}, {{"type", "message"}, {"message", a}}}));
  REQUIRE(v1.requests.size() == 2);
  CHECK(body(v1, 1)["messages"].size() == 3);
}

TEST_CASE("a real pi session rebuilds the messages pi sent on every turn") {
  // pairs/pi__session.jsonl and the requests pi 1.6.0 sent in that session
  // (pairs/PROVENANCE.md): the rebuilt messages are the sent ones but for
  // the cache breakpoint pi moves every turn.
  const auto t = read_trace(read_fixture("traces/pairs/pi__session.jsonl"));
  std::vector<J> sent;
  const auto recording = read_fixture("traces/pairs/pi__session.recording.jsonl");
  for (std::size_t pos = 0, end; (end = recording.find('\n', pos)) != std::string::npos; pos = end + 1)
    sent.push_back(J::parse(J::parse(recording.substr(pos, end - pos))["request_body"].get<std::string>()));
  REQUIRE(t.requests.size() == sent.size());
  CHECK(any_note(t, "1 system message(s)"));
  for (std::size_t k = 0; k < sent.size(); ++k) {
    INFO("turn " << k);
    auto messages = sent[k]["messages"];
    for (auto& m : messages)
      if (m["content"].is_array())
        for (auto& b : m["content"]) b.erase("cache_control");
    const auto rebuilt = body(t, k);
    CHECK(rebuilt["model"] == sent[k]["model"]);
    CHECK(rebuilt["messages"] == messages);
  }
}

TEST_CASE("a real pi session replayed with pi's head saves what its captured requests save") {
  // 49.1 % both at the time of writing; the session file without a head
  // (53.0 %) is further off than the table's head leaves it.
  std::string error;
  const auto o200k = tokens::builtin_tokenizer("o200k_base", &error);
  REQUIRE(o200k);
  const auto sent = replay_at_defaults(read_trace(read_fixture("traces/pairs/pi__session.recording.jsonl")), *o200k);
  const auto session = replay_at_defaults(read_trace(read_fixture("traces/pairs/pi__session.jsonl")), *o200k);
  REQUIRE(session.turns == sent.turns);
  REQUIRE(session.heads.size() == 1);
  CHECK(session.heads.begin()->second.choice.reason == head_choice::why::format_default);
  CHECK(std::abs(double(session.tokens_before) - double(sent.tokens_before)) < 0.01 * double(sent.tokens_before));
  CHECK(std::abs(session.saved_share() - sent.saved_share()) < 0.01);
}
