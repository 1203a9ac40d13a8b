// Replay is deterministic, leaves server-side tool results alone and
// measures prefix stability, the prompt cache and what it costs.
#include "rewrite/endpoint.hpp"
#include <catch2/catch.hpp>

#include "tests/rewrite/replay/replay_test_support.hpp"

using namespace gistproxy::rewrite;
using namespace gistproxy::testing::replay;
using J = nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("prefix stability: tools, system and every earlier message must come back unchanged") {
  const auto layout = endpoint_named("messages")->wire().cache_prefix();
  auto keeps_prefix = [&](const std::string& prev, const std::string& cur) { return gistproxy::rewrite::keeps_prefix(prev, cur, layout); };
  J a = {{"model", "m"}, {"system", "s"}, {"tools", {{{"name", "t"}}}}, {"messages", {{{"role", "user"}, {"content", "1"}}}}};
  J b = a;
  b["messages"].push_back({{"role", "assistant"}, {"content", "2"}});
  CHECK(keeps_prefix(a.dump(), b.dump()));
  J moved_marker = b;  // cache breakpoints move every turn: not part of the prefix
  moved_marker["messages"][0]["cache_control"] = {{"type", "ephemeral"}};
  CHECK(keeps_prefix(a.dump(), moved_marker.dump()));
  J edited = b;
  edited["messages"][0]["content"] = "1 (truncated)";
  CHECK_FALSE(keeps_prefix(a.dump(), edited.dump()));
  J new_tools = b;
  new_tools["tools"].push_back({{"name", "read_blob"}});
  CHECK_FALSE(keeps_prefix(a.dump(), new_tools.dump()));
  J new_system = b;
  new_system["system"] = "s2";
  CHECK_FALSE(keeps_prefix(a.dump(), new_system.dump()));
}

TEST_CASE("replay offloads the same way every turn, keeps the prefix stable and is deterministic") {
  J turn1 = J::array({{{"role", "user"}, {"content", "go"}}});
  for (auto& m : tool_turn("c1", big_output("a"))) turn1.push_back(m);
  J turn2 = turn1;
  turn2.push_back({{"role", "assistant"}, {"content", "next"}});
  for (auto& m : tool_turn("c2", big_output("b"))) turn2.push_back(m);
  J tools = {{{"type", "function"}, {"function", {{"name", "cat"}}}}};
  auto trace = read_trace(J::array({J{{"model", "m"}, {"messages", turn1}, {"tools", tools}},
                                       J{{"model", "m"}, {"messages", turn2}, {"tools", tools}}}).dump());

  replay_env one, two;
  std::vector<std::string> forwarded_one, forwarded_two;
  auto s1 = one.r.run(trace, "t", [&](const replayed_request& r) { forwarded_one.emplace_back(r.forwarded); });
  auto s2 = two.r.run(trace, "t", [&](const replayed_request& r) { forwarded_two.emplace_back(r.forwarded); });
  CHECK(forwarded_one == forwarded_two);
  CHECK(s1.turns == 2);
  CHECK(s1.conversations == 1);
  CHECK(s1.offloads == 3);  // c1 twice, c2 once
  CHECK(s1.distinct_blobs == 2);
  CHECK(s1.dedupe_ratio() == Approx(1.0 / 3));
  CHECK(s1.tokens_after < s1.tokens_before / 4);
  CHECK(s1.by_tool.at("cat").outputs == 2);
  CHECK(s1.by_tool.at("cat").offloaded == 2);
  CHECK(s1.prefix_pairs == 1);
  CHECK(s1.prefix_stable_after == 1);
  CHECK(s1.prefix_stable_before == 1);
  CHECK(s1.stored_bytes > 0);
  CHECK(s2.tokens_after == s1.tokens_after);
}

TEST_CASE("replay simulates the prompt cache and prices the input side before and after") {
  J turn1 = J::array({{{"role", "system"}, {"content", std::string(4000, 's')}}, {{"role", "user"}, {"content", "go"}}});
  for (auto& m : tool_turn("c1", big_output("a"))) turn1.push_back(m);
  J turn2 = turn1;
  turn2.push_back({{"role", "assistant"}, {"content", "next"}});
  J tools = {{{"type", "function"}, {"function", {{"name", "cat"}}}}};
  auto body = [&](const std::string& model, const J& messages) {
    return J{{"model", model}, {"messages", messages}, {"tools", tools}};
  };
  std::string error;
  auto prices = price_table::parse(R"({"models":[{"match":"priced","input":2,"cache_read":0.2,"output":8},
                                                  {"match":"house-1","input":2,"cache_read":0.2,"output":8}]})", error);
  REQUIRE(prices);
  replay_env env;
  replayer r{env.engine, env.store, env.estimator, &*prices};
  auto s = r.run(read_trace(J::array({body("priced", turn1), body("priced-20260101", turn2)}).dump()), "t");
  CHECK(s.priced_turns == 2);
  CHECK(s.unpriced_turns == 0);
  // Turn 1 writes everything; turn 2 reads turn 1's whole prefix (tools, the
  // system prompt and its three messages) from the cache, before and after.
  CHECK(s.cache_read_tokens_before > s.tokens_before / 3);
  CHECK(s.cache_read_tokens_after > 0);
  CHECK(s.cache_read_tokens_after < s.cache_read_tokens_before);  // the offloaded output is not in the prefix any more
  const double expected_before =
      (double(s.cache_read_tokens_before) * 0.2 + double(s.tokens_before - s.cache_read_tokens_before) * 2) * 1e-6;
  CHECK(s.cost_usd_before == Approx(expected_before));
  CHECK(s.cost_usd_after < s.cost_usd_before / 3);
  // Changing the tools busts the whole prefix.
  J other_tools = {{{"type", "function"}, {"function", {{"name", "ls"}}}}};
  auto busted = r.run(read_trace(J::array({body("priced", turn1), J{{"model", "priced"}, {"messages", turn2}, {"tools", other_tools}}}).dump()), "t");
  CHECK(busted.cache_read_tokens_before == 0);
  // A model without a price is counted, never priced at $0.
  auto unpriced = r.run(read_trace(J::array({body("mystery", turn1)}).dump()), "t");
  CHECK(unpriced.unpriced_turns == 1);
  CHECK(unpriced.priced_turns == 0);
  CHECK(unpriced.cost_usd_before == 0);
  // A newer version of a listed family is priced as that family's entry, and the report says which.
  auto by_family = r.run(read_trace(J::array({body("house-2", turn1), body("priced", turn1)}).dump()), "t");
  CHECK(by_family.priced_turns == 2);
  CHECK(by_family.fallback_priced_turns == 1);
  CHECK(by_family.priced_as == std::map<std::string, std::string>{{"house-2", "house-1"}});
  CHECK(by_family.cost_usd_before > 0);
}

namespace {
const fs::path fixtures = GISTPROXY_FIXTURES;
const fs::path shared_traces = GISTPROXY_SHARED_TRACES;
}  // namespace

TEST_CASE("real traces: every fixture parses into requests") {
  for (auto name : {"swe-agent__flash.traj", "vcr__pydantic-ai_web_fetch_tool.yaml",
                    "claude-code__spotter_agent-a881341.jsonl", "openhands__astropy-12907-call2.json"}) {
    INFO(name);
    auto t = read_trace(slurp(fixtures / "traces" / name));
    CHECK_FALSE(t.requests.empty());
  }
}

TEST_CASE("real traces: a server-side web_fetch result is never offloaded") {
  auto t = read_trace(slurp(fixtures / "traces" / "vcr__pydantic-ai_web_fetch_tool.yaml"));
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[1].body().find("web_fetch_tool_result") != std::string::npos);
  replay_env env;
  auto s = env.r.run(t, "t");
  CHECK(s.offloads == 0);
}

TEST_CASE("real traces: the Claude Code transcript's large tool results are offloaded") {
  auto t = read_trace(slurp(fixtures / "traces" / "claude-code__spotter_agent-a881341.jsonl"));
  CHECK(t.requests.size() == 3);
  replay_env env;
  auto s = env.r.run(t, "t");
  CHECK(s.offloads >= 2);
  CHECK(s.saved_share() > 0.5);
}

TEST_CASE("real traces in ../shared/traces parse when present") {
  if (!fs::exists(shared_traces)) return;  // optional: the fixtures above stand in for them
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(shared_traces)) {
    auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".jsonl" && ext != ".yaml" && ext != ".json" && ext != ".traj")) continue;
    INFO(e.path().string());
    auto t = read_trace(slurp(e.path()));
    CHECK_FALSE(t.requests.empty());
    ++files;
  }
  CHECK(files > 0);
}

TEST_CASE("replay says why outputs were not offloaded, per distinct output, and how many requests were rebuilt") {
  auto call = [](const std::string& id, const std::string& tool, const std::string& output) {
    return J::array({{{"role", "assistant"}, {"content", nullptr},
                      {"tool_calls", {{{"id", id}, {"type", "function"}, {"function", {{"name", tool}, {"arguments", "{}"}}}}}}},
                     {{"role", "tool"}, {"tool_call_id", id}, {"content", output}}});
  };
  J list = J::array({{{"role", "user"}, {"content", "go"}}});
  for (auto& m : call("c1", "cat", big_output("a"))) list.push_back(m);       // offloaded
  for (auto& m : call("c2", "cat", "short")) list.push_back(m);               // below the threshold
  for (auto& m : call("c3", "secrets", big_output("s"))) list.push_back(m);   // --tool-policy secrets=never
  list.push_back({{"role", "assistant"}, {"content", "done"}});
  auto traj = list.dump();
  // An image whose base64 does not decode cannot be stored exactly: it stays inline.
  J image = {{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", "!!not base64!!"}}}};
  J bad_image = J::array({{{"model", "claude-sonnet-4-5"}, {"max_tokens", 100},
                           {"messages", J::array({{{"role", "user"}, {"content", J::array({{{"type", "tool_result"},
                                                  {"tool_use_id", "t1"}, {"content", J::array({image})}}})}}})}}});
  memory_blob_store store([] { return std::int64_t(1000); });
  char_ratio_estimator estimator;
  offload_config cfg;
  cfg.tool_rules["secrets"] = {tool_rule::action::never, 0};
  offload_engine engine(cfg, store, estimator, [] { return std::uint64_t(1); });
  replayer r(engine, store, estimator);

  auto s = r.run(read_trace(traj), "t");
  CHECK(s.turns == 4);  // one request per assistant message
  CHECK(s.rebuilt_requests == 4);
  CHECK(s.not_offloaded["below_threshold"] == 1);  // "short", seen in three requests, counted once
  CHECK(s.not_offloaded["excluded_by_policy"] == 1);
  CHECK(s.not_offloaded.count("offloaded") == 0);
  CHECK(s.by_tool["cat"].offloaded == 1);

  auto l = r.run(read_trace(bad_image.dump()), "t");
  CHECK(l.not_offloaded["not_exact"] == 1);

  // Bodies recorded as sent are not rebuilt.
  J bodies = J::array({chat_body(J::array({{{"role", "user"}, {"content", "hi"}}}))});
  CHECK(r.run(read_trace(bodies.dump()), "t").rebuilt_requests == 0);
}

TEST_CASE("replay counts the conversations that cost more, page-in hops included, as the totals show") {
  auto opening = [](const std::string& ask, const std::string& salt) {
    J messages = J::array({{{"role", "user"}, {"content", ask}}});
    for (auto& m : tool_turn("c1", big_output(salt))) messages.push_back(m);
    return messages;
  };
  auto line = [](const J& messages, int hops, const J& read_backs) {
    return J{{"gistproxy_record", 1}, {"path", "/v1/chat/completions"}, {"request_body", chat_body(messages).dump()},
             {"hops", hops}, {"read_backs", read_backs}}.dump() + "\n";
  };
  std::string error;
  auto prices = price_table::parse(R"({"models":[{"match":"gpt-4o","input":2.5,"cache_read":1.25,"output":10}]})", error);
  REQUIRE(prices);
  // The handle the output becomes, as replay offloads it.
  std::string handle;
  {
    replay_env env;
    env.r.run(read_trace(line(opening("a", "x"), 0, J::array())), "t", [&](const replayed_request& r) {
      if (!r.report.offloads.empty()) handle = std::string(r.report.offloads[0].hash);
    });
  }
  REQUIRE(handle.size() == 64);
  auto run = [&](const std::string& text) {
    replay_env env;
    replayer r{env.engine, env.store, env.estimator, &*prices};
    return r.run(read_trace(text), "t");
  };
  // Conversation a reads its output back, whole, on three hops; b never reads.
  const auto rereads = line(opening("a", "x"), 3, J::array({handle}));
  const auto saves = line(opening("b", "y"), 0, J::array());
  const auto dear = run(rereads);
  CHECK(dear.page_in_input_tokens > 3 * 9000);  // three reads of a 40 KB output
  CHECK(dear.costs_more());
  CHECK(dear.conversations_costing_more == 1);
  const auto cheap = run(saves);
  CHECK_FALSE(cheap.costs_more());
  CHECK(cheap.conversations_costing_more == 0);
  const auto both = run(rereads + saves);
  CHECK(both.conversations == 2);
  CHECK(both.conversations_costing_more == 1);  // the part, whatever the total shows
  CHECK(both.cost_usd_after == Approx(dear.cost_usd_after + cheap.cost_usd_after));
}
