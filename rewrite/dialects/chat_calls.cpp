// Chat Completions: read_blob calls are choices[0].message.tool_calls entries;
// results go back as role:"tool" messages.
#include <nlohmann/json.hpp>

#include "rewrite/dialects/chat.hpp"
#include "rewrite/intercept/splice.hpp"

namespace gistproxy::rewrite {

response_calls chat_dialect::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
  response_calls out;
  if (!response.is_object() || !response.contains("choices") || !response["choices"].is_array() ||
      response["choices"].empty())
    return out;
  const auto& message = response["choices"][0].value("message", nlohmann::json::object());
  for (const auto& call : message.value("tool_calls", nlohmann::json::array())) {
    const auto& fn = call.value("function", nlohmann::json::object());
    if (fn.value("name", "") == tool_name)
      out.blob_calls.push_back({call.value("id", ""), fn.value("arguments", "{}")});
    else
      ++out.client_calls;
  }
  return out;
}

std::optional<std::string> chat_dialect::continue_conversation(std::string_view body, const nlohmann::json& response,
                                                               std::string_view tool_name,
                                                               const std::vector<call_result>& results,
                                                               bool last_hop) const {
  auto top = read_top_level(body);
  if (!top || !top->member("messages")) return std::nullopt;
  const auto& message = response["choices"][0]["message"];
  nlohmann::json assistant = {{"role", "assistant"}, {"content", message.value("content", nlohmann::json())}};
  nlohmann::json calls = nlohmann::json::array();
  for (const auto& call : message.value("tool_calls", nlohmann::json::array()))
    if (call.value("function", nlohmann::json::object()).value("name", "") == tool_name) calls.push_back(call);
  assistant["tool_calls"] = calls;
  std::string items = assistant.dump();
  for (const auto& r : results)
    items += "," + nlohmann::json{{"role", "tool"}, {"tool_call_id", r.id}, {"content", r.text}}.dump();
  auto next = append_to_array(body, *top->member("messages"), items);
  if (!last_hop) return next;
  auto again = read_top_level(next);
  return set_member(next, *again, "tool_choice", "\"none\"");
}

}  // namespace gistproxy::rewrite
