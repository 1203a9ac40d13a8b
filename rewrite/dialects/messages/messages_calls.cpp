// Anthropic Messages: read_blob calls are tool_use content blocks; results go
// back as tool_result blocks in a user message.
#include <nlohmann/json.hpp>

#include "rewrite/dialects/messages/messages_api.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/checked.hpp"

namespace gistproxy::rewrite {

response_calls messages_wire::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
  response_calls out;
  for (const auto& block : checked::array_at(response, "content")) {
    if (!checked::string_is(block, "type", "tool_use")) continue;
    if (checked::string_is(block, "name", tool_name))
      out.blob_calls.push_back({checked::string_at(block, "id"), checked::dump(checked::member(block, "input"))});
    else
      ++out.client_calls;
  }
  return out;
}

void messages_wire::remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const {
  if (!checked::member(response, "content").is_array()) return;
  nlohmann::json kept = nlohmann::json::array();
  bool client_calls = false;
  for (const auto& block : response["content"]) {
    const bool tool_use = checked::string_is(block, "type", "tool_use");
    if (tool_use && checked::string_is(block, "name", tool_name)) continue;
    client_calls = client_calls || tool_use;
    kept.push_back(block);
  }
  if (kept.size() == response["content"].size()) return;
  response["content"] = std::move(kept);
  if (!client_calls && checked::string_is(response, "stop_reason", "tool_use")) response["stop_reason"] = "end_turn";
}

std::optional<std::string> messages_wire::continue_conversation(std::string_view body,
                                                                   const nlohmann::json& response,
                                                                   std::string_view tool_name,
                                                                   const std::vector<call_result>& results,
                                                                   bool last_hop) const {
  auto top = read_top_level(body);
  if (!top || !top->member("messages") || body[top->member("messages")->begin] != '[') return std::nullopt;
  nlohmann::json content = nlohmann::json::array();
  for (const auto& block : checked::array_at(response, "content")) {
    if (checked::string_is(block, "type", "tool_use") && !checked::string_is(block, "name", tool_name)) continue;
    content.push_back(block);
  }
  nlohmann::json tool_results = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json b = {{"type", "tool_result"}, {"tool_use_id", r.id}, {"content", r.text}};
    if (r.is_error) b["is_error"] = true;
    tool_results.push_back(std::move(b));
  }
  auto items = checked::dump(nlohmann::json{{"role", "assistant"}, {"content", content}}) + "," +
               checked::dump(nlohmann::json{{"role", "user"}, {"content", tool_results}});
  auto next = append_to_array(body, *top->member("messages"), items);
  if (!last_hop) return next;
  auto again = read_top_level(next);
  if (!again) return std::nullopt;
  return set_member(next, *again, "tool_choice", R"({"type":"none"})");
}

}  // namespace gistproxy::rewrite
