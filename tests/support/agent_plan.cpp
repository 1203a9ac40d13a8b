#include "tests/support/agent_plan.hpp"

#include <functional>
#include <string>

namespace gistproxy::testing {
namespace {

constexpr std::string_view marker = "agent runs: ";
constexpr std::string_view id_prefix = "toolu_step_";

struct plan_state {
  nlohmann::json steps;   // the latest plan's steps (null: no plan seen)
  std::size_t prompts = 0;  // plan prompts seen
  std::size_t results = 0;  // results of this plan's calls since its prompt
};

std::string text_in(const nlohmann::json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>() + "\n";
  return out;
}

// A user prompt: a new plan when it holds one.
void note_prompt(plan_state& s, const std::string& text) {
  const auto at = text.find(marker);
  if (at == std::string::npos) return;
  const auto start = at + marker.size();
  const auto line = text.substr(start, text.find('\n', start) - start);
  auto steps = nlohmann::json::parse(line, nullptr, false);
  if (!steps.is_array()) return;
  s.steps = std::move(steps);
  ++s.prompts;
  s.results = 0;
}

void note_result(plan_state& s, const nlohmann::json& id) {
  if (id.is_string() && id.get<std::string>().rfind(id_prefix, 0) == 0) ++s.results;
}

plan_state read_plan(llm_api api, const nlohmann::json& req) {
  plan_state s;
  if (api == llm_api::responses) {
    const auto input = req.value("input", nlohmann::json());
    if (input.is_string()) note_prompt(s, input.get<std::string>());
    for (const auto& item : input.is_array() ? input : nlohmann::json::array()) {
      if (!item.is_object()) continue;
      if (item.value("role", "") == "user") note_prompt(s, text_in(item.value("content", nlohmann::json())));
      if (item.value("type", "") == "function_call_output" || item.value("type", "") == "custom_tool_call_output")
        note_result(s, item.value("call_id", nlohmann::json()));
    }
    return s;
  }
  for (const auto& msg : req.value("messages", nlohmann::json::array())) {
    if (!msg.is_object()) continue;
    const auto role = msg.value("role", "");
    const auto content = msg.value("content", nlohmann::json());
    if (role == "tool") note_result(s, msg.value("tool_call_id", nlohmann::json()));
    if (role != "user") continue;
    bool results = false;
    for (const auto& b : content.is_array() ? content : nlohmann::json::array())
      if (b.is_object() && b.value("type", "") == "tool_result") {
        note_result(s, b.value("tool_use_id", nlohmann::json()));
        results = true;
      }
    if (!results) note_prompt(s, text_in(content));
  }
  return s;
}

}  // namespace

std::string mock_message_id(const model_turn& turn) {
  // A number, not the call id: a client must never see "rb_" from a hop it was spared.
  return turn.calls.empty() ? "msg_mock" : "msg_mock_" + std::to_string(std::hash<std::string>{}(turn.calls.front().id));
}

std::optional<model_turn> agent_plan_turn(llm_api api, const nlohmann::json& request) {
  if (api != llm_api::messages && api != llm_api::chat && api != llm_api::responses) return std::nullopt;
  const auto s = read_plan(api, request);
  if (s.steps.is_null()) return std::nullopt;
  model_turn t;
  if (s.results >= s.steps.size()) {
    t.text = "done: ran " + std::to_string(s.steps.size()) + " steps";
    return t;
  }
  const auto& step = s.steps[s.results];
  if (!step.is_object() || !step.contains("name") || !step["name"].is_string()) {
    t.text = "bad step " + std::to_string(s.results);
    return t;
  }
  const auto id = std::string(id_prefix) + std::to_string(s.prompts) + "_" + std::to_string(s.results);
  t.calls.push_back({id, step["name"].get<std::string>(), step.value("arguments", nlohmann::json::object())});
  return t;
}

}  // namespace gistproxy::testing
