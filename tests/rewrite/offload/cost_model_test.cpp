// --inject-read-blob=auto: read_blob is offered from the start where its
// definition is a rounding error of what every turn carries, else from the
// first output whose arrival pays for the late definition on that turn alone;
// the decision never flips back as the conversation grows.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <random>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/offload/cost_model.hpp"
#include "rewrite/cost/prices.hpp"
#include "rewrite/offload/engine.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("the cost model: from the start when the definition is a rounding error of the stable head") {
  cost_model_config cfg;  // 0.5%
  CHECK(decide_offer(cfg, 20000, 78, 0.1, {}).reason == offer_decision::why::head);
  CHECK(decide_offer(cfg, 15600, 78, 0.1, {}).reason == offer_decision::why::head);
  CHECK_FALSE(decide_offer(cfg, 15500, 78, 0.1, {}).offer());  // 0.503%: not from the start
}

TEST_CASE("the cost model: an output pays for a late definition when its saving covers rewriting the prefix") {
  cost_model_config cfg;
  cfg.page_in_rate = 0;
  // prefix 1,000 tokens: rewriting it costs 900 (0.9 x 1,000) + the definition 78.
  CHECK(decide_offer(cfg, 1000, 78, 0.1, {{1000, 978}}).reason == offer_decision::why::output_pays);
  CHECK_FALSE(decide_offer(cfg, 1000, 78, 0.1, {{1000, 977}}).offer());
  // Behind 200,000 tokens of conversation a 3,000-token output does not pay.
  CHECK_FALSE(decide_offer(cfg, 1000, 78, 0.1, {{200000, 3000}}).offer());
  // Earlier outputs count at the cache-read price: the third pays (26,100 + 0.1 x 10,000 >=
  // 0.9 x 30,000 + 78) where alone it would not.
  auto d = decide_offer(cfg, 1000, 78, 0.1, {{10000, 5000}, {20000, 5000}, {30000, 26100}});
  CHECK(d.reason == offer_decision::why::output_pays);
  CHECK(d.first_paying == 2);
  CHECK_FALSE(decide_offer(cfg, 1000, 78, 0.1, {{10000, 5000}, {20000, 5000}, {30000, 26000}}).offer());
  // Expected page-ins make it dearer: a hop re-reads the prefix from the cache.
  cfg.page_in_rate = 1.0;
  CHECK_FALSE(decide_offer(cfg, 1000, 78, 0.1, {{1000, 978}}).offer());
  CHECK(decide_offer(cfg, 1000, 78, 0.1, {{1000, 1078}}).offer());
}

TEST_CASE("the cost model never takes read_blob back as a conversation grows") {
  std::mt19937 rng(7);
  cost_model_config cfg;
  for (int conversation = 0; conversation < 200; ++conversation) {
    std::vector<offload_point> points;
    std::uint64_t prefix = 500 + rng() % 20000;
    const std::uint64_t head = 200 + rng() % 30000;
    bool offered = false;
    for (int turn = 0; turn < 40; ++turn) {
      if (rng() % 3 == 0) points.push_back({prefix, rng() % 40000});
      prefix += 200 + rng() % 5000;
      const bool now = decide_offer(cfg, head, 78, 0.08, points).offer();
      CHECK((now || !offered));  // once offered, offered on every later turn
      offered = now;
    }
  }
}

TEST_CASE("the stable head: everything but the conversation list, plus its first item, from each dialect's scan") {
  auto head = [](const char* api, const std::string& body) {
    request_scan scan;
    REQUIRE(endpoint_named(api)->wire().scan(body, scan));
    return stable_head_bytes(body.size(), scan.conversation, scan.second_item_begin);
  };
  const std::string chat = R"({"model":"m","tools":[1,2,3],"messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"},{"role":"user","content":"more"}]})";
  const std::string rest = R"({"role":"user","content":"hi"},{"role":"user","content":"more"}])";
  CHECK(head("chat", chat) == chat.size() - rest.size());
  // The head stays the same as the conversation grows.
  const std::string longer = chat.substr(0, chat.size() - 2) + R"(,{"role":"user","content":"and more"}]})";
  CHECK(head("chat", longer) == head("chat", chat));
  const std::string messages = R"({"model":"c","system":"s","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]})";
  CHECK(head("messages", messages) == messages.size() - std::string(R"({"role":"assistant","content":"b"}])").size());
  const std::string responses = R"({"model":"g","instructions":"i","input":[{"role":"user","content":"a"},{"role":"user","content":"b"}]})";
  CHECK(head("responses", responses) == responses.size() - std::string(R"({"role":"user","content":"b"}])").size());
  const std::string gemini = R"({"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b"}]}]})";
  CHECK(head("gemini", gemini) == gemini.size() - std::string(R"({"role":"model","parts":[{"text":"b"}]}]})").size() + 1);
  // One item, a string input or no list at all: the whole body is the head.
  const std::string one = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
  CHECK(head("chat", one) == one.size());
  const std::string text_input = R"({"model":"g","input":"hello"})";
  CHECK(head("responses", text_input) == text_input.size());
}

namespace {

std::string chat_request(std::size_t tools_bytes, std::size_t history_bytes, std::size_t output_bytes) {
  nlohmann::json tools = nlohmann::json::array(
      {{{"type", "function"}, {"function", {{"name", "run"}, {"description", std::string(tools_bytes, 'd')}}}}});
  nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", "go"}}});
  if (history_bytes) messages.push_back({{"role", "assistant"}, {"content", std::string(history_bytes, 'h')}});
  std::string output;
  for (int i = 0; output.size() < output_bytes; ++i) output += "log line " + std::to_string(i) + ": all good\n";
  messages.push_back({{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"},
                                                               {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}});
  messages.push_back({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", output}});
  return nlohmann::json{{"model", "gpt-5"}, {"messages", messages}, {"tools", tools}}.dump();
}

struct cost_engine {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  char_ratio_estimator estimator;
  offload_engine engine;
  cost_engine() : engine([] {
          offload_config c;
          c.inject = inject_mode::cost;
          return c;
        }(), store, estimator) {}
  rewrite_report run(const std::string& body) { return engine.rewrite(endpoint_named("chat")->wire(), body, "t").report; }
};

}  // namespace

TEST_CASE("auto in the engine: light conversations go as sent, heavy ones are offloaded, large heads get read_blob at once") {
  cost_engine e;
  SECTION("small head, small output: forwarded as sent, no read_blob") {
    auto r = e.run(chat_request(200, 0, 500));
    CHECK(r.outcome == rewrite_outcome::unchanged);
    CHECK_FALSE(r.tool_injected);
    CHECK(r.offer_reason == "not_worth");
  }
  SECTION("small head, a large new output: offloaded and read_blob offered") {
    auto r = e.run(chat_request(200, 0, 40000));
    CHECK(r.offer_reason == "output_pays");
    CHECK(r.offloads.size() == 1);
    CHECK(r.tool_injected);
    CHECK(r.offer_arrives);  // its newest output pays: this turn's break is the plan
    // A later turn (an answer and a new small output after it): still offered, no longer arriving.
    auto later = nlohmann::json::parse(chat_request(200, 0, 40000));
    later["messages"].push_back({{"role", "assistant"}, {"tool_calls", {{{"id", "c2"}, {"type", "function"},
                                                                          {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}});
    later["messages"].push_back({{"role", "tool"}, {"tool_call_id", "c2"}, {"content", "ok"}});
    auto next = e.run(later.dump());
    CHECK(next.offer_reason == "output_pays");
    CHECK_FALSE(next.offer_arrives);
  }
  SECTION("an output over the threshold behind a long conversation does not pay for the late definition") {
    auto r = e.run(chat_request(200, 400000, 12000));
    CHECK(r.offer_reason == "not_worth");
    CHECK(r.offloads.empty());
    CHECK_FALSE(r.tool_injected);
    REQUIRE(r.fates.size() == 1);
    CHECK(r.fates[0] == output_fate::not_worth_it);
    CHECK(fate_name(r.fates[0]) == "not_worth_it");
  }
  SECTION("a large head: read_blob from the first turn, and the same output is offloaded") {
    auto r = e.run(chat_request(80000, 400000, 12000));
    CHECK(r.offer_reason == "head");
    CHECK(r.tool_injected);
    CHECK(r.offloads.size() == 1);
    auto light = e.run(chat_request(80000, 0, 500));
    CHECK(light.tool_injected);  // offered before any output: the prefix never changes later
  }
}

TEST_CASE("an output's prefix holds the tools whether the client sends them before or after its messages") {
  // A provider caches tools first, then the conversation, whatever the
  // members' order in the JSON (Codex CLI sends `input` before `tools`).
  const std::string body = chat_request(40000, 0, 32000);  // keys sorted: messages, model, tools
  auto parsed = nlohmann::ordered_json::parse(body);
  nlohmann::ordered_json tools_first = {{"model", parsed["model"]}, {"tools", parsed["tools"]}, {"messages", parsed["messages"]}};
  REQUIRE(body.find("\"tools\"") > body.find("\"messages\""));
  cost_engine after, before;
  const auto tools_after = after.run(body);
  const auto tools_before = before.run(tools_first.dump());
  // About 10,000 tokens of tools before the output: rewriting them costs
  // more than its ~8,000 tokens save; counted from its byte offset alone the
  // tools would be left out and the late definition would seem to pay.
  CHECK(tools_before.offer_reason == "not_worth");
  CHECK(tools_after.offer_reason == tools_before.offer_reason);
  CHECK(tools_after.offloads.size() == tools_before.offloads.size());

  request_scan scan;
  REQUIRE(endpoint_named("chat")->wire().scan(body, scan));
  REQUIRE(scan.conversation);
  const auto outside = body.size() - scan.conversation->size();
  CHECK(cache_order_offset(body.size(), scan.conversation, scan.conversation->begin + 10) == outside + 10);
  CHECK(cache_order_offset(body.size(), scan.conversation, 3) == 3);  // outside the list: its own offset
  CHECK(cache_order_offset(body.size(), std::nullopt, 77) == 77);
}

TEST_CASE("the cost model's rho comes from the model's own prices") {
  CHECK(cache_read_ratio({3.0, 0.30, 3.75, 15.0}).value() == Approx(0.08));  // Anthropic: read over write
  CHECK(cache_read_ratio({2.0, 0.5, 0.0, 8.0}).value() == Approx(0.25));     // gpt-4.1: read over input
  CHECK(cache_read_ratio({15.0, 0.0, 0.0, 120.0}).value() == 1.0);           // no cache discount
  CHECK_FALSE(cache_read_ratio({0.0, 0.0, 0.0, 0.0}));
  const auto& table = price_table::defaults();
  auto sonnet = table.find("claude-sonnet-4-5");
  REQUIRE(sonnet);
  CHECK(cache_read_ratio(*sonnet).value() == Approx(0.08));
  // A model whose cache is a smaller discount makes a late read_blob cheaper to
  // bring: the same output pays behind a longer prefix.
  cost_model_config cfg;
  cfg.page_in_rate = 0;
  const std::vector<offload_point> late{{10000, 6000}};
  CHECK_FALSE(decide_offer(cfg, 1000, 78, 0.1, late).offer());  // 0.9 x 10,000 + 78 > 6,000
  CHECK(decide_offer(cfg, 1000, 78, 0.5, late).offer());        // 0.5 x 10,000 + 78 <= 6,000
}
