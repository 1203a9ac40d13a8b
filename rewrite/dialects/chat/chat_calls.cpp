// Chat Completions: read_blob calls are choices[0].message.tool_calls entries;
// results go back as role:"tool" messages. The response is the upstream's:
// every member is read through checked accessors (a wrong type reads as absent).
#include <nlohmann/json.hpp>

#include "rewrite/dialects/chat/chat_api.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/checked.hpp"

namespace gistproxy::rewrite {
namespace {

const nlohmann::json& first_message(const nlohmann::json& response) {
  return checked::object_at(checked::element(checked::array_at(response, "choices"), 0), "message");
}

// A tool call's function name and arguments, when both are strings.
bool call_named(const nlohmann::json& call, std::string_view tool_name) {
  return checked::string_is(checked::object_at(call, "function"), "name", tool_name);
}

}  // namespace

response_calls chat_wire::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
  response_calls out;
  for (const auto& call : checked::array_at(first_message(response), "tool_calls")) {
    if (!call_named(call, tool_name)) {
      ++out.client_calls;
      continue;
    }
    // Arguments are a JSON string by the API's contract; anything else is
    // passed on as JSON text so the page-in parser answers with a tool error.
    const auto& args = checked::member(checked::object_at(call, "function"), "arguments");
    out.blob_calls.push_back({checked::string_at(call, "id"),
                              args.is_string() ? args.get<std::string>() : checked::dump(args)});
  }
  return out;
}

void chat_wire::remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const {
  if (!checked::member(response, "choices").is_array()) return;
  for (auto& choice : response["choices"]) {
    if (!checked::member(choice, "message").is_object()) continue;
    auto& message = choice["message"];
    if (!checked::member(message, "tool_calls").is_array()) continue;
    auto& calls = message["tool_calls"];
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& call : calls)
      if (!call_named(call, tool_name)) kept.push_back(call);
    if (kept.size() == calls.size()) continue;
    if (kept.empty()) {
      message.erase("tool_calls");
      if (checked::string_is(choice, "finish_reason", "tool_calls")) choice["finish_reason"] = "stop";
    } else {
      calls = std::move(kept);
    }
  }
}

std::optional<std::string> chat_wire::continue_conversation(std::string_view body, const nlohmann::json& response,
                                                               std::string_view tool_name,
                                                               const std::vector<call_result>& results,
                                                               bool last_hop) const {
  auto top = read_top_level(body);
  if (!top || !top->member("messages") || body[top->member("messages")->begin] != '[') return std::nullopt;
  const auto& message = first_message(response);
  const auto& content = checked::member(message, "content");
  nlohmann::json assistant = {{"role", "assistant"}, {"content", content.is_string() ? content : nlohmann::json()}};
  nlohmann::json calls = nlohmann::json::array();
  for (const auto& call : checked::array_at(message, "tool_calls"))
    if (call_named(call, tool_name)) calls.push_back(call);
  assistant["tool_calls"] = calls;
  std::string items = checked::dump(assistant);
  for (const auto& r : results)
    items += "," + checked::dump(nlohmann::json{{"role", "tool"}, {"tool_call_id", r.id}, {"content", r.text}});
  auto next = append_to_array(body, *top->member("messages"), items);
  if (!last_hop) return next;
  auto again = read_top_level(next);
  if (!again) return std::nullopt;
  return set_member(next, *again, "tool_choice", "\"none\"");
}

}  // namespace gistproxy::rewrite
