// Responses: read_blob calls are function_call output items; results go back
// as function_call_output input items (or, with previous_response_id, as the
// whole input of a request that continues from this hop's response).
#include <nlohmann/json.hpp>

#include "rewrite/dialects/responses.hpp"
#include "rewrite/intercept/splice.hpp"
#include "rewrite/json/checked.hpp"

namespace gistproxy::rewrite {

response_calls responses_dialect::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
  response_calls out;
  for (const auto& item : checked::array_at(response, "output")) {
    if (!checked::string_is(item, "type", "function_call")) continue;
    if (!checked::string_is(item, "name", tool_name)) {
      ++out.client_calls;
      continue;
    }
    const auto& args = checked::member(item, "arguments");
    out.blob_calls.push_back({checked::string_at(item, "call_id"), args.is_string() ? args.get<std::string>() : checked::dump(args)});
  }
  return out;
}

void responses_dialect::remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const {
  if (!checked::member(response, "output").is_array()) return;
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& item : response["output"])
    if (!checked::string_is(item, "type", "function_call") || !checked::string_is(item, "name", tool_name))
      kept.push_back(item);
  response["output"] = std::move(kept);
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
  if (top->member("previous_response_id") && checked::member(response, "id").is_string()) {
    // Server-side state: continue from this hop's response with just the outputs.
    next = set_member(body, *top, "previous_response_id", checked::dump(checked::member(response, "id")));
    auto again = read_top_level(next);
    if (!again) return std::nullopt;
    next = set_member(next, *again, "input", checked::dump(outputs));
  } else {
    auto input = top->member("input");
    if (!input || body[input->begin] != '[') return std::nullopt;
    // Everything the model produced except the client's own calls (reasoning
    // items must travel with the function calls they led to).
    std::string items;
    for (const auto& item : checked::array_at(response, "output")) {
      if (checked::string_is(item, "type", "function_call") && !checked::string_is(item, "name", tool_name)) continue;
      if (!items.empty()) items += ',';
      items += checked::dump(item);
    }
    for (const auto& o : outputs) {
      if (!items.empty()) items += ',';
      items += checked::dump(o);
    }
    next = append_to_array(body, *input, items);
  }
  if (!last_hop) return next;
  auto again = read_top_level(next);
  if (!again) return std::nullopt;
  return set_member(next, *again, "tool_choice", "\"none\"");
}

}  // namespace gistproxy::rewrite
