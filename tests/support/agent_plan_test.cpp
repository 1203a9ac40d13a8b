// The mock's "agent runs: [STEPS]" script (tests/support/agent_plan.hpp),
// which the capture pairs of scripts/capture-agent-session were made with.
#include <catch2/catch.hpp>

#include "tests/support/agent_plan.hpp"

using namespace gistproxy::testing;
using J = nlohmann::json;

namespace {

const std::string plan = R"(agent runs: [{"name":"Read","arguments":{"file_path":"/a"}},{"name":"Grep","arguments":{"pattern":"x"}}])";

J user(const std::string& text) { return {{"role", "user"}, {"content", J::array({{{"type", "text"}, {"text", text}}})}}; }
J call(const std::string& id) { return {{"role", "assistant"}, {"content", J::array({{{"type", "tool_use"}, {"id", id}, {"name", "Read"}, {"input", J::object()}}})}}; }
J result(const std::string& id) { return {{"role", "user"}, {"content", J::array({{{"type", "tool_result"}, {"tool_use_id", id}, {"content", "big"}}})}}; }

}  // namespace

TEST_CASE("agent plan: one step a turn, then a text answer, and a later plan starts again", "[mock]") {
  J messages = J::array({user(plan)});
  auto turn = agent_plan_turn(llm_api::messages, {{"messages", messages}});
  REQUIRE(turn);
  REQUIRE(turn->calls.size() == 1);
  CHECK(turn->calls[0].name == "Read");
  CHECK(turn->calls[0].id == "toolu_step_1_0");
  CHECK(turn->calls[0].arguments == J{{"file_path", "/a"}});

  messages.push_back(call("toolu_step_1_0"));
  messages.push_back(result("toolu_step_1_0"));
  turn = agent_plan_turn(llm_api::messages, {{"messages", messages}});
  REQUIRE(turn->calls.size() == 1);
  CHECK(turn->calls[0].name == "Grep");
  CHECK(turn->calls[0].id == "toolu_step_1_1");

  messages.push_back(call("toolu_step_1_1"));
  messages.push_back(result("toolu_step_1_1"));
  turn = agent_plan_turn(llm_api::messages, {{"messages", messages}});
  CHECK(turn->calls.empty());
  CHECK(turn->text == "done: ran 2 steps");

  messages.push_back({{"role", "assistant"}, {"content", "done"}});
  messages.push_back(user(plan));
  turn = agent_plan_turn(llm_api::messages, {{"messages", messages}});
  REQUIRE(turn->calls.size() == 1);
  CHECK(turn->calls[0].id == "toolu_step_2_0");
}

TEST_CASE("agent plan: Responses outputs count, other requests are left to the other scripts", "[mock]") {
  const J input = J::array({{{"role", "user"}, {"content", J::array({{{"type", "input_text"}, {"text", plan}}})}},
                            {{"type", "function_call"}, {"call_id", "toolu_step_1_0"}, {"name", "Read"}, {"arguments", "{}"}},
                            {{"type", "function_call_output"}, {"call_id", "toolu_step_1_0"}, {"output", "big"}}});
  const auto turn = agent_plan_turn(llm_api::responses, {{"input", input}});
  REQUIRE(turn);
  REQUIRE(turn->calls.size() == 1);
  CHECK(turn->calls[0].name == "Grep");
  CHECK_FALSE(agent_plan_turn(llm_api::messages, {{"messages", J::array({user("find the needle")})}}));
  CHECK_FALSE(agent_plan_turn(llm_api::messages, {{"messages", J::array({user("agent runs: [not json")})}}));
}

TEST_CASE("mock message ids: each tool-calling answer has its own", "[mock]") {
  model_turn a, b, text;
  a.calls.push_back({"toolu_step_1_0", "Read", J::object()});
  b.calls.push_back({"toolu_step_1_1", "Read", J::object()});
  CHECK(mock_message_id(a) != mock_message_id(b));
  CHECK(mock_message_id(text) == "msg_mock");
  CHECK(render_response(llm_api::messages, a, "m")["id"] == mock_message_id(a));
}
