// Anthropic Messages: read_blob calls are tool_use content blocks; results go
// back as tool_result blocks in a user message.
#include <nlohmann/json.hpp>

#include "rewrite/dialects/messages.hpp"
#include "rewrite/intercept/splice.hpp"

namespace gistproxy::rewrite {

response_calls messages_dialect::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
  response_calls out;
  if (!response.is_object()) return out;
  for (const auto& block : response.value("content", nlohmann::json::array())) {
    if (block.value("type", "") != "tool_use") continue;
    if (block.value("name", "") == tool_name)
      out.blob_calls.push_back({block.value("id", ""), block.value("input", nlohmann::json::object()).dump()});
    else
      ++out.client_calls;
  }
  return out;
}

std::optional<std::string> messages_dialect::continue_conversation(std::string_view body,
                                                                   const nlohmann::json& response,
                                                                   std::string_view tool_name,
                                                                   const std::vector<call_result>& results,
                                                                   bool last_hop) const {
  auto top = read_top_level(body);
  if (!top || !top->member("messages")) return std::nullopt;
  nlohmann::json content = nlohmann::json::array();
  for (const auto& block : response.value("content", nlohmann::json::array())) {
    if (block.value("type", "") == "tool_use" && block.value("name", "") != tool_name) continue;
    content.push_back(block);
  }
  nlohmann::json tool_results = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json b = {{"type", "tool_result"}, {"tool_use_id", r.id}, {"content", r.text}};
    if (r.is_error) b["is_error"] = true;
    tool_results.push_back(std::move(b));
  }
  auto items = nlohmann::json{{"role", "assistant"}, {"content", content}}.dump() + "," +
               nlohmann::json{{"role", "user"}, {"content", tool_results}}.dump();
  auto next = append_to_array(body, *top->member("messages"), items);
  if (!last_hop) return next;
  return set_member(next, *read_top_level(next), "tool_choice", R"({"type":"none"})");
}

}  // namespace gistproxy::rewrite
