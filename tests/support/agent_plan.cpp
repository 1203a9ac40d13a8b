#include "tests/support/agent_plan.hpp"

#include <functional>
#include <map>
#include <regex>
#include <string>

namespace gistproxy::testing {
namespace {

constexpr std::string_view marker = "agent runs: ";
constexpr std::string_view id_prefix = "toolu_step_";

struct plan_state {
  nlohmann::json steps;   // the latest plan's steps (null: no plan seen)
  std::size_t prompts = 0;  // plan prompts seen
  std::size_t results = 0;  // results of this plan's calls since its prompt
  std::map<std::string, std::string> result_text;  // this plan's results by call id
};

std::string text_in(const nlohmann::json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>() + "\n";
  return out;
}

// A user prompt: a new plan when it holds one. opencode sends a prompt with
// quotes as a JSON string literal: decoded first.
void note_prompt(plan_state& s, const std::string& prompt) {
  auto text = prompt;
  if (const auto quoted = nlohmann::json::parse(prompt, nullptr, false); quoted.is_string()) text = quoted.get<std::string>();
  const auto at = text.find(marker);
  if (at == std::string::npos) return;
  const auto start = at + marker.size();
  const auto line = text.substr(start, text.find('\n', start) - start);
  auto steps = nlohmann::json::parse(line, nullptr, false);
  if (!steps.is_array()) return;
  s.steps = std::move(steps);
  ++s.prompts;
  s.results = 0;
  s.result_text.clear();
}

void note_result(plan_state& s, const nlohmann::json& id, const nlohmann::json& output) {
  if (!id.is_string() || id.get<std::string>().rfind(id_prefix, 0) != 0) return;
  ++s.results;
  s.result_text[id.get<std::string>()] = output.is_string() ? output.get<std::string>() : text_in(output);
}

// Gemini: a user turn is a prompt or the results of the model's calls.
void read_gemini(plan_state& s, const nlohmann::json& req) {
  for (const auto& content : req.value("contents", nlohmann::json::array())) {
    if (!content.is_object() || content.value("role", "user") != "user") continue;
    bool results = false;
    for (const auto& part : content.value("parts", nlohmann::json::array())) {
      if (!part.is_object() || !part.contains("functionResponse") || !part["functionResponse"].is_object()) continue;
      const auto& r = part["functionResponse"];
      const nlohmann::json response = r.value("response", nlohmann::json::object());
      std::string text;
      for (const auto& value : response)  // {"output": …}, or {"error": …}
        text += value.is_string() ? value.get<std::string>() : value.dump();
      note_result(s, r.value("id", nlohmann::json()), text);
      results = true;
    }
    if (!results) note_prompt(s, text_in(content.value("parts", nlohmann::json())));
  }
}

plan_state read_plan(llm_api api, const nlohmann::json& req) {
  plan_state s;
  if (api == llm_api::gemini) {
    read_gemini(s, req);
    return s;
  }
  if (api == llm_api::responses) {
    const auto input = req.value("input", nlohmann::json());
    if (input.is_string()) note_prompt(s, input.get<std::string>());
    for (const auto& item : input.is_array() ? input : nlohmann::json::array()) {
      if (!item.is_object()) continue;
      if (item.value("role", "") == "user") note_prompt(s, text_in(item.value("content", nlohmann::json())));
      if (item.value("type", "") == "function_call_output" || item.value("type", "") == "custom_tool_call_output")
        note_result(s, item.value("call_id", nlohmann::json()), item.value("output", nlohmann::json()));
    }
    return s;
  }
  for (const auto& msg : req.value("messages", nlohmann::json::array())) {
    if (!msg.is_object()) continue;
    const auto role = msg.value("role", "");
    const auto content = msg.value("content", nlohmann::json());
    if (role == "tool") note_result(s, msg.value("tool_call_id", nlohmann::json()), content);
    if (role != "user") continue;
    bool results = false;
    for (const auto& b : content.is_array() ? content : nlohmann::json::array())
      if (b.is_object() && b.value("type", "") == "tool_result") {
        note_result(s, b.value("tool_use_id", nlohmann::json()), b.value("content", nlohmann::json()));
        results = true;
      }
    if (!results) note_prompt(s, text_in(content));
  }
  return s;
}

// The newest reference gistproxy left in the request: read_blob("HANDLE"),
// its quotes escaped in the JSON text.
std::string newest_handle(const nlohmann::json& request) {
  static const std::regex ref(R"re(read_blob\(\\"([0-9a-f]{16,64})\\"\))re");
  const auto text = request.dump();
  std::string handle;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ref); it != std::sregex_iterator(); ++it) handle = (*it)[1];
  return handle;
}

// What follows NEEDLE in a read_blob result, up to the end of its line (or of
// the JSON string it sits in: Cline's results are JSON), past read_blob's own
// "[… match "NEEDLE"]" header.
std::string needle_line(const std::string& text) {
  for (auto at = text.find("NEEDLE"); at != std::string::npos; at = text.find("NEEDLE", at + 1)) {
    const auto line_start = text.rfind('\n', at);
    if (text.compare(line_start == std::string::npos ? 0 : line_start + 1, 1, "[") == 0) continue;
    return text.substr(at, text.find_first_of("\n\\\"", at) - at);
  }
  return "no needle";
}

std::string step_id(const plan_state& s, std::size_t k) {
  return std::string(id_prefix) + std::to_string(s.prompts) + "_" + std::to_string(k);
}

bool is_read_blob(const nlohmann::json& step) { return step.is_object() && step.value("name", "") == "read_blob"; }

// The last answer: the steps run, and what each read_blob step paged back.
std::string final_text(const plan_state& s) {
  std::string text = "done: ran " + std::to_string(s.steps.size()) + " steps";
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    if (!is_read_blob(s.steps[k])) continue;
    const auto found = s.result_text.find(step_id(s, k));
    text += "; found: " + (found == s.result_text.end() ? std::string("no result") : needle_line(found->second));
  }
  return text;
}

}  // namespace

std::string mock_message_id(const model_turn& turn) {
  // A number, not the call id: a client must never see "rb_" from a hop it was spared.
  return turn.calls.empty() ? "msg_mock" : "msg_mock_" + std::to_string(std::hash<std::string>{}(turn.calls.front().id));
}

std::optional<model_turn> agent_plan_turn(llm_api api, const nlohmann::json& request) {
  if (api == llm_api::converse) return std::nullopt;
  const auto s = read_plan(api, request);
  if (s.steps.is_null()) return std::nullopt;
  model_turn t;
  if (s.results >= s.steps.size()) {
    t.text = final_text(s);
    return t;
  }
  const auto& step = s.steps[s.results];
  if (!step.is_object() || !step.contains("name") || !step["name"].is_string()) {
    t.text = "bad step " + std::to_string(s.results);
    return t;
  }
  auto arguments = step.value("arguments", nlohmann::json::object());
  if (is_read_blob(step) && arguments.is_object() && !arguments.contains("handle")) {
    const auto handle = newest_handle(request);
    if (handle.empty()) {
      t.text = "step " + std::to_string(s.results) + ": no reference to read back";
      return t;
    }
    arguments["handle"] = handle;
  }
  t.calls.push_back({step_id(s, s.results), step["name"].get<std::string>(), std::move(arguments)});
  return t;
}

}  // namespace gistproxy::testing
