// --inject-read-blob=auto: once a turn of a conversation went upstream with
// read_blob on offer, every later turn offers it, whatever the client drops
// from its history (a cleared output took the reason to offer with it).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/page_in/churn_tracker.hpp"
#include "tests/support/tool_conversation.hpp"

using namespace gistproxy::rewrite;
using gistproxy::testing::body_of;
using gistproxy::testing::log_output;

namespace {

std::string big_log() { return log_output("log", 40000); }

// Twelve turns, one output each; turn 2's is large, and from turn 3 on the
// client has cleared it.
std::vector<std::string> outputs_of_turn(int turn) {
  std::vector<std::string> outs;
  for (int i = 1; i <= turn; ++i) outs.push_back(i == 2 ? (turn == 2 ? big_log() : "[output cleared]") : "ok " + std::to_string(i));
  return outs;
}

struct auto_engine {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  char_ratio_estimator estimator;
  offload_engine engine;
  auto_engine() : engine([] {
          offload_config c;
          c.inject = inject_mode::cost;
          return c;
        }(), store, estimator) {}
};

}  // namespace

TEST_CASE("read_blob once offered stays offered on every API when the client clears the output that paid for it") {
  const std::string api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini", "converse");
  INFO(api);
  auto_engine e;
  const auto& d = *endpoint_named(api == "converse" ? "bedrock-converse" : api);
  conversation_record record;
  std::vector<bool> offered;
  for (int turn = 1; turn <= 12; ++turn) {
    output_reuse reuse;
    reuse.conversation = &record;
    auto r = e.engine.rewrite(d.wire(), body_of(api, outputs_of_turn(turn)), "t", std::nullopt, std::nullopt, reuse).report;
    offered.push_back(r.tool_injected);
    record.offered |= r.tool_injected || r.tool_already_ours;  // as the proxy notes it
    if (turn == 2) CHECK(r.offer_reason == "output_pays");
    if (turn > 2) CHECK(r.offer_reason == "offered_before");
  }
  CHECK(offered == std::vector<bool>{false, true, true, true, true, true, true, true, true, true, true, true});
  // Without the record, the cleared turn would take read_blob back out.
  auto fresh = e.engine.rewrite(d.wire(), body_of(api, outputs_of_turn(3)), "t").report;
  CHECK_FALSE(fresh.tool_injected);
  CHECK(fresh.offer_reason == "not_worth");
}

TEST_CASE("read_blob offered before lets a late large output be offloaded without paying for the definition again") {
  auto_engine e;
  // Behind 100,000 tokens of conversation this output would not pay for read_blob's late arrival.
  nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", "go"}},
                                                   {{"role", "assistant"}, {"content", std::string(400000, 'h')}}});
  messages.push_back({{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}});
  messages.push_back({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", big_log()}});
  const auto body = nlohmann::json{{"model", "gpt-4o"}, {"messages", messages}, {"tools", {{{"type", "function"}, {"function", {{"name", "run"}}}}}}}.dump();
  const auto& chat = *endpoint_named("chat");
  CHECK(e.engine.rewrite(chat.wire(), body, "t").report.offer_reason == "not_worth");
  conversation_record record;
  record.offered = true;  // it is in the cached prefix already
  output_reuse reuse;
  reuse.conversation = &record;
  auto r = e.engine.rewrite(chat.wire(), body, "t", std::nullopt, std::nullopt, reuse).report;
  CHECK(r.offer_reason == "offered_before");
  CHECK(r.tool_injected);
  CHECK_FALSE(r.offer_arrives);  // nothing arrives: no break is planned
  CHECK(r.offloads.size() == 1);
}

TEST_CASE("the churn tracker remembers per conversation that read_blob was offered") {
  churn_tracker t;
  CHECK_FALSE(t.record("a").offered);
  t.note_offered("a");
  CHECK(t.record("a").offered);
  CHECK_FALSE(t.record("b").offered);
  t.begin_turn("a");
  CHECK(t.record("a").offered);  // a new turn keeps it
}
