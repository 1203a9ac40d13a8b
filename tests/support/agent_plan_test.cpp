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

TEST_CASE("agent plan: a read_blob step pages back the newest reference and the answer quotes it", "[mock]") {
  const std::string steps = R"(agent runs: [{"name":"Bash","arguments":{"command":"cat big"}},{"name":"read_blob","arguments":{"pattern":"NEEDLE"}}])";
  const std::string offloaded = R"(cat: 90 KB, offloaded; read_blob("00112233445566778899aabbccddeeff") pages it back)";
  J messages = J::array({user(steps), call("toolu_step_1_0"),
                         {{"role", "user"}, {"content", J::array({{{"type", "tool_result"}, {"tool_use_id", "toolu_step_1_0"}, {"content", offloaded}}})}}});
  auto turn = agent_plan_turn(llm_api::messages, {{"messages", messages}});
  REQUIRE(turn);
  REQUIRE(turn->calls.size() == 1);
  CHECK(turn->calls[0].name == "read_blob");
  CHECK(turn->calls[0].arguments == J{{"pattern", "NEEDLE"}, {"handle", "00112233445566778899aabbccddeeff"}});

  messages.push_back(call("toolu_step_1_1"));
  messages.push_back({{"role", "user"}, {"content", J::array({{{"type", "tool_result"}, {"tool_use_id", "toolu_step_1_1"},
                                                                {"content", "[1 match \"NEEDLE\"]\nline 7: NEEDLE port=1\n"}}})}});
  turn = agent_plan_turn(llm_api::messages, {{"messages", messages}});
  CHECK(turn->text == "done: ran 2 steps; found: NEEDLE port=1");
  // Without a reference in the request there is nothing to page back: said, not called.
  turn = agent_plan_turn(llm_api::messages, {{"messages", J::array({user(steps), call("toolu_step_1_0"), result("toolu_step_1_0")})}});
  CHECK(turn->calls.empty());
  CHECK(turn->text.find("no reference") != std::string::npos);
}

TEST_CASE("agent plan: Gemini prompts and function responses count", "[mock]") {
  const J contents = J::array({{{"role", "user"}, {"parts", J::array({{{"text", plan}}})}},
                               {{"role", "model"}, {"parts", J::array({{{"functionCall", {{"id", "toolu_step_1_0"}, {"name", "Read"}, {"args", J::object()}}}}})}},
                               {{"role", "user"}, {"parts", J::array({{{"functionResponse", {{"id", "toolu_step_1_0"}, {"name", "Read"},
                                                                                              {"response", {{"output", "big"}}}}}}})}}});
  auto turn = agent_plan_turn(llm_api::gemini, {{"contents", contents}});
  REQUIRE(turn);
  REQUIRE(turn->calls.size() == 1);
  CHECK(turn->calls[0].name == "Grep");
  CHECK(turn->calls[0].id == "toolu_step_1_1");
  CHECK_FALSE(agent_plan_turn(llm_api::gemini, {{"contents", J::array({{{"role", "user"}, {"parts", J::array({{{"text", "hi"}}})}}})}}));
}
