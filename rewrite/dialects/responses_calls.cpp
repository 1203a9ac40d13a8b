// Responses: read_blob calls are function_call output items; results go back
// as function_call_output input items (or, with previous_response_id, as the
// whole input of a request that continues from this hop's response).
#include <nlohmann/json.hpp>

#include "rewrite/dialects/responses.hpp"
#include "rewrite/intercept/splice.hpp"

namespace gistproxy::rewrite {

response_calls responses_dialect::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
  response_calls out;
  if (!response.is_object()) return out;
  for (const auto& item : response.value("output", nlohmann::json::array())) {
    if (item.value("type", "") != "function_call") continue;
    if (item.value("name", "") == tool_name) out.blob_calls.push_back({item.value("call_id", ""), item.value("arguments", "{}")});
    else ++out.client_calls;
  }
  return out;
}

std::optional<std::string> responses_dialect::continue_conversation(std::string_view body,
                                                                    const nlohmann::json& response,
                                                                    std::string_view tool_name,
                                                                    const std::vector<call_result>& results,
                                                                    bool last_hop) const {
  auto top = read_top_level(body);
  if (!top) return std::nullopt;
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& r : results)
    outputs.push_back({{"type", "function_call_output"}, {"call_id", r.id}, {"output", r.text}});
  std::string next;
  if (top->member("previous_response_id") && response.contains("id")) {
    // Server-side state: continue from this hop's response with just the outputs.
    next = set_member(body, *top, "previous_response_id", nlohmann::json(response["id"]).dump());
    next = set_member(next, *read_top_level(next), "input", outputs.dump());
  } else {
    auto input = top->member("input");
    if (!input || body[input->begin] != '[') return std::nullopt;
    // Everything the model produced except the client's own calls (reasoning
    // items must travel with the function calls they led to).
    std::string items;
    for (const auto& item : response.value("output", nlohmann::json::array())) {
      if (item.value("type", "") == "function_call" && item.value("name", "") != tool_name) continue;
      if (!items.empty()) items += ',';
      items += item.dump();
    }
    for (const auto& o : outputs) {
      if (!items.empty()) items += ',';
      items += o.dump();
    }
    next = append_to_array(body, *input, items);
  }
  if (!last_hop) return next;
  return set_member(next, *read_top_level(next), "tool_choice", "\"none\"");
}

}  // namespace gistproxy::rewrite
