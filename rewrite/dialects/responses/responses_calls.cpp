// Responses: read_blob calls are function_call output items; results go back
// as function_call_output input items appended to the request's own input
// (with or without previous_response_id: see continue_conversation).
#include <nlohmann/json.hpp>

#include "rewrite/dialects/responses/responses_api.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/checked.hpp"

namespace gistproxy::rewrite {

response_calls responses_wire::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
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

void responses_wire::remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const {
  if (!checked::member(response, "output").is_array()) return;
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& item : response["output"])
    if (!checked::string_is(item, "type", "function_call") || !checked::string_is(item, "name", tool_name))
      kept.push_back(item);
  response["output"] = std::move(kept);
}

std::optional<std::string> responses_wire::continue_conversation(std::string_view body,
                                                                    const nlohmann::json& response,
                                                                    std::string_view tool_name,
                                                                    const std::vector<call_result>& results,
                                                                    bool last_hop) const {
  auto top = read_top_level(body);
  if (!top) return std::nullopt;
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& r : results)
    outputs.push_back({{"type", "function_call_output"}, {"call_id", r.id}, {"output", r.text}});
  // Every hop appends this hop's items and the read_blob results to the
  // request's own input, keeping the client's previous_response_id (a
  // response the client chained on, so one that was stored). Chaining on the
  // hop's own response instead broke three ways: with store:false it was
  // never stored, a client call beside read_blob had no output in it, and the
  // client's next turn chained on a response whose state ended in a
  // read_blob call. The last hop's response holds the whole conversation.
  // Everything the model produced except the client's own calls (reasoning
  // items must travel with the function calls they led to; the model
  // re-issues the client's calls once it has read).
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
  std::string next;
  auto input = top->member("input");
  if (input && body[input->begin] == '[') {
    next = append_to_array(body, *input, items);
  } else if (input && body[input->begin] == '"') {
    // A string input is one user message: spelled out, then the items.
    const std::string message = "{\"role\":\"user\",\"content\":" + std::string(body.substr(input->begin, input->size())) + "}";
    next = set_member(body, *top, "input", "[" + message + (items.empty() ? "" : "," + items) + "]");
  } else if (!input) {
    next = set_member(body, *top, "input", "[" + items + "]");
  } else {
    return std::nullopt;
  }
  if (!last_hop) return next;
  auto again = read_top_level(next);
  if (!again) return std::nullopt;
  return set_member(next, *again, "tool_choice", "\"none\"");
}

}  // namespace gistproxy::rewrite
