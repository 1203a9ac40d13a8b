#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/prompt_cache/prefix_tracker.hpp"
#include "rewrite/endpoint.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;

namespace {

J messages_body(const J& messages, const J& tools = J::array({{{"name", "run"}, {"input_schema", {{"type", "object"}}}}})) {
  return {{"model", "claude-sonnet-4-5"}, {"max_tokens", 100}, {"system", "You are terse."}, {"tools", tools},
          {"messages", messages}};
}

// Anthropic Messages' layout: tools, system, messages.
std::optional<prefix_fingerprint> fingerprint(std::string_view body, std::string_view api = "messages") {
  return fingerprint_prefix(body, endpoint_named(api)->wire().cache_prefix());
}

prefix_fingerprint fp(const J& body) {
  auto f = fingerprint(body.dump());
  REQUIRE(f);
  return *f;
}

}  // namespace

TEST_CASE("prefix fingerprint: a turn that appends messages extends, any earlier change does not") {
  J m1 = J::array({{{"role", "user"}, {"content", "hi"}}});
  J m2 = m1;
  m2.push_back({{"role", "assistant"}, {"content", "hello"}});
  m2.push_back({{"role", "user"}, {"content", "more"}});
  auto t1 = summary_of(fp(messages_body(m1)));
  CHECK(t1.messages == 1);
  CHECK(extends(t1, fp(messages_body(m2))));
  CHECK(extends(t1, fp(messages_body(m1))));  // the same turn again
  J edited = m2;
  edited[0]["content"] = "hi!";
  CHECK_FALSE(extends(t1, fp(messages_body(edited))));
  CHECK_FALSE(extends(summary_of(fp(messages_body(m2))), fp(messages_body(m1))));  // shorter
  J other_tools = J::array({{{"name", "ls"}, {"input_schema", {{"type", "object"}}}}});
  CHECK_FALSE(extends(t1, fp(messages_body(m2, other_tools))));
  J other_system = messages_body(m2);
  other_system["system"] = "You are verbose.";
  CHECK_FALSE(extends(t1, fp(other_system)));
  // Neither the model, max_tokens nor key order are part of the prefix.
  J reordered = {{"messages", m2}, {"tools", messages_body(m1)["tools"]}, {"system", "You are terse."}, {"model", "x"}};
  CHECK(extends(t1, fp(reordered)));
}

TEST_CASE("prefix fingerprint: cache_control markers that move every turn are not part of the prefix") {
  J m1 = J::array({{{"role", "user"}, {"content", J::array({{{"type", "text"}, {"text", "hi"}, {"cache_control", {{"type", "ephemeral"}}}}})}}});
  J m2 = J::array({{{"role", "user"}, {"content", J::array({{{"type", "text"}, {"text", "hi"}}})}},
                   {{"role", "assistant"}, {"content", "hello"}},
                   {{"role", "user"}, {"content", J::array({{{"type", "text"}, {"text", "more"}, {"cache_control", {{"type", "ephemeral"}}}}})}}});
  CHECK(extends(summary_of(fp(messages_body(m1))), fp(messages_body(m2))));
}

TEST_CASE("prefix fingerprint: an array element holding only the cache marker is left out whole, anything more is content") {
  const prefix_layout layout{
      .head = {"tools"}, .conversation = "messages", .provider_state = {}, .cache_marker = "mark", .uncached_text = {}};
  const auto with = fingerprint_prefix(R"({"tools":[1,{"mark":{}}],"messages":[{"c":["a",{"mark":1}]}]})", layout);
  const auto without = fingerprint_prefix(R"({"tools":[1],"messages":[{"c":["a"]}]})", layout);
  const auto more = fingerprint_prefix(R"({"tools":[1,{"mark":{},"x":1}],"messages":[{"c":["a"]}]})", layout);
  const auto empty = fingerprint_prefix(R"({"tools":[1,{}],"messages":[{"c":["a"]}]})", layout);
  REQUIRE(with);
  REQUIRE(without);
  CHECK(extends(summary_of(*with), *without));
  CHECK(extends(summary_of(*without), *with));
  CHECK_FALSE(extends(summary_of(*without), *more));
  CHECK_FALSE(extends(summary_of(*without), *empty));
}

TEST_CASE("prefix fingerprint: every API's layout, and what has no prefix in the body") {
  auto chat = fingerprint(R"({"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"q"}]})", "chat");
  REQUIRE(chat);
  CHECK(chat->cumulative.size() == 2);
  auto responses = fingerprint(R"({"model":"m","instructions":"s","input":"just a string"})", "responses");
  REQUIRE(responses);
  CHECK(responses->cumulative.size() == 1);
  auto gemini = fingerprint(R"({"systemInstruction":{"parts":[{"text":"s"}]},"contents":[{"role":"user","parts":[{"text":"q"}]}]})", "gemini");
  REQUIRE(gemini);
  CHECK(gemini->cumulative.size() == 1);
  CHECK_FALSE(fingerprint(R"({"model":"m","previous_response_id":"resp_1","input":[]})", "responses"));
  CHECK(fingerprint(R"({"model":"m","previous_response_id":null,"input":[]})", "responses"));
  CHECK_FALSE(fingerprint("[1,2]"));
  CHECK_FALSE(fingerprint(R"({"messages":[{"role":"user")"));
  // Deep nesting is bounded (hashed as raw bytes past a depth), never recursed without end.
  std::string deep = R"({"messages":[)" + std::string(400, '[') + std::string(400, ']') + "]}";
  CHECK(fingerprint(deep));
}

TEST_CASE("prefix tracker: breaks are attributed to the client, to gistproxy, or to budget mode") {
  prefix_tracker t;
  auto body = [](int turns, bool offloaded) {
    J m = J::array({{{"role", "user"}, {"content", "start"}}});
    for (int i = 0; i < turns; ++i) {
      m.push_back({{"role", "assistant"}, {"content", "call " + std::to_string(i)}});
      m.push_back({{"role", "user"}, {"content", offloaded && i == 0 ? "[reference]" : "output " + std::to_string(i)}});
    }
    return fingerprint(messages_body(m).dump());
  };
  // Conversation A: the client appends, gistproxy forwards what it got.
  CHECK(t.observe("A", body(1, false), std::nullopt, planned_break::none) == prefix_verdict::first_turn);
  CHECK(t.observe("A", body(2, false), std::nullopt, planned_break::none) == prefix_verdict::extended);
  // The client rewrites its own history: its break.
  CHECK(t.observe("A", body(1, true), std::nullopt, planned_break::none) == prefix_verdict::client_break);
  // Conversation B: output 0 went upstream inline on turn 1 and as a reference on turn 2
  // while the client only appended: gistproxy broke the prefix.
  CHECK(t.observe("B", body(1, false), std::nullopt, planned_break::none) == prefix_verdict::first_turn);
  CHECK(t.observe("B", body(2, false), body(2, true), planned_break::none) == prefix_verdict::proxy_break);
  // The same, because budget mode evicted it: labelled as such.
  CHECK(t.observe("C", body(1, false), std::nullopt, planned_break::none) == prefix_verdict::first_turn);
  CHECK(t.observe("C", body(2, false), body(2, true), planned_break::budget) == prefix_verdict::budget_break);
  // Once offloaded, the reference stays: later turns extend again.
  CHECK(t.observe("C", body(3, false), body(3, true), planned_break::none) == prefix_verdict::extended);
  // An age-aware batch and read_blob's late arrival, each labelled.
  CHECK(t.observe("E", body(1, false), std::nullopt, planned_break::none) == prefix_verdict::first_turn);
  CHECK(t.observe("E", body(2, false), body(2, true), planned_break::age) == prefix_verdict::age_break);
  CHECK(t.observe("F", body(1, false), std::nullopt, planned_break::none) == prefix_verdict::first_turn);
  CHECK(t.observe("F", body(2, false), body(2, true), planned_break::offer) == prefix_verdict::offer_break);
  CHECK(break_cause(prefix_verdict::age_break) == "age");
  CHECK(break_cause(prefix_verdict::offer_break) == "offer");
  CHECK(t.observe("D", std::nullopt, std::nullopt, planned_break::none) == prefix_verdict::unknown);
  CHECK(break_cause(prefix_verdict::proxy_break) == "proxy");
  CHECK(break_cause(prefix_verdict::extended).empty());
}

TEST_CASE("prefix tracker: memory is bounded, the least recent conversation is forgotten") {
  prefix_tracker t(16);  // one conversation per stripe
  auto f = fingerprint(R"({"messages":[{"role":"user","content":"x"}]})");
  for (int i = 0; i < 1000; ++i) t.observe("conversation " + std::to_string(i), f, std::nullopt, planned_break::none);
  // The most recent one is remembered, an early one is not (it looks new again).
  CHECK(t.observe("conversation 999", f, std::nullopt, planned_break::none) == prefix_verdict::extended);
  CHECK(t.observe("conversation 0", f, std::nullopt, planned_break::none) == prefix_verdict::first_turn);
}

TEST_CASE("prefix layout: each API's own members make its head, under every spelling the API takes") {
  // Gemini's REST API takes the system instruction as systemInstruction or
  // system_instruction: a change to either is a change of the cached prefix.
  const std::string contents = R"("contents":[{"role":"user","parts":[{"text":"q"}]}])";
  for (const std::string member : {"systemInstruction", "system_instruction"}) {
    auto a = fingerprint(R"({")" + member + R"(":{"parts":[{"text":"s"}]},)" + contents + "}", "gemini");
    auto b = fingerprint(R"({")" + member + R"(":{"parts":[{"text":"s2"}]},)" + contents + "}", "gemini");
    REQUIRE(a);
    REQUIRE(b);
    CHECK_FALSE(extends(summary_of(*a), *b));
  }
  // A member another API caches is not part of this one's prefix.
  auto chat = fingerprint(R"({"system":"a","messages":[{"role":"user","content":"q"}]})", "chat");
  auto chat2 = fingerprint(R"({"system":"b","messages":[{"role":"user","content":"q"}]})", "chat");
  REQUIRE(chat);
  REQUIRE(chat2);
  CHECK(extends(summary_of(*chat), *chat2));
  // Cache markers are the API's to declare: Anthropic's cache_control is left
  // out of Messages' prefix; Gemini declares none, so there it is content.
  const std::string marked = R"({"contents":[{"role":"user","cache_control":{"type":"ephemeral"},"parts":[]}]})";
  const std::string plain = R"({"contents":[{"role":"user","parts":[]}]})";
  CHECK_FALSE(extends(summary_of(*fingerprint(plain, "gemini")), *fingerprint(marked, "gemini")));
  CHECK(extends(summary_of(*fingerprint(R"({"messages":[{"role":"user"}]})")),
                *fingerprint(R"({"messages":[{"role":"user","cache_control":{"type":"ephemeral"}}]})")));
  // Every registered API names its conversation list and at least its tools
  // (Bedrock Converse keeps them in toolConfig).
  for (const auto* d : all_endpoints()) {
    const auto layout = d->wire().cache_prefix();
    CHECK_FALSE(layout.conversation.empty());
    CHECK(layout.head[0] == (d->name() == "bedrock-converse" ? "toolConfig" : "tools"));
  }
}

TEST_CASE("shared prefix: head members then items up to the first change, each measured in the current body") {
  const auto layout = endpoint_named("messages")->wire().cache_prefix();
  const std::string prev = R"({"tools":[1],"system":"s","messages":["a","b"]})";
  const std::string cur = R"({"system":"s","tools":[1],"messages":["a",{"cache_control":{},"x":1},"c"]})";
  auto p = split_prefix(prev, layout), c = split_prefix(cur, layout);
  REQUIRE(p);
  REQUIRE(c);
  std::string measured;
  auto measure = [&](json::range r) {
    measured += cur.substr(r.begin, r.size()) + "|";
    return std::uint64_t(r.size());
  };
  CHECK(shared_prefix(*p, *c, measure) == 3 + 3 + 3);
  CHECK(measured == "[1]|\"s\"|\"a\"|");
  CHECK_FALSE(keeps_prefix(*p, *c));
  CHECK(keeps_prefix(*split_prefix(R"({"tools":[1],"system":"s","messages":["a"]})", layout), *c));
}

TEST_CASE("prefix: Claude Code's billing block is left out of the system prompt's hash, its other blocks are not") {
  const auto layout = endpoint_named("messages")->wire().cache_prefix();
  const auto body = [](const std::string& billing, const std::string& prompt) {
    return R"({"system":[{"type":"text","text":")" + billing + R"("},{"type":"text","text":")" + prompt +
           R"(","cache_control":{"type":"ephemeral"}}],"messages":["a"]})";
  };
  const auto a = split_prefix(body("x-anthropic-billing-header: cc_version=2.1.152.d94; cch=c2426;", "You code."), layout);
  const auto b = split_prefix(body("x-anthropic-billing-header: cc_version=2.1.152.d94; cch=2b3b7;", "You code."), layout);
  const auto other = split_prefix(body("x-anthropic-billing-header: cc_version=2.1.152.d94; cch=2b3b7;", "You test."), layout);
  const auto plain = split_prefix(body("a billing note of the client's own", "You code."), layout);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(other);
  REQUIRE(plain);
  CHECK(keeps_prefix(*a, *b));
  CHECK_FALSE(keeps_prefix(*a, *other));
  CHECK_FALSE(keeps_prefix(*a, *plain));  // any other text is prompt
  // In a message it is the conversation's text: only the head leaves it out.
  const auto item = [](const std::string& text) {
    return R"({"messages":[{"role":"user","content":[{"type":"text","text":")" + text + R"("}]}]})";
  };
  CHECK_FALSE(keeps_prefix(*split_prefix(item("x-anthropic-billing-header: cch=1;"), layout),
                           *split_prefix(item("x-anthropic-billing-header: cch=2;"), layout)));
}
