#include "tests/support/responses_state.hpp"

namespace gistproxy::testing {
namespace {

nlohmann::json input_items(const nlohmann::json& request) {
  const auto input = request.value("input", nlohmann::json::array());
  if (input.is_string()) return nlohmann::json::array({{{"role", "user"}, {"content", input}}});
  return input.is_array() ? input : nlohmann::json::array();
}

bool answers_call(const nlohmann::json& items, const std::string& call_id) {
  for (const auto& item : items)
    if (item.is_object() && item.value("type", "") == "function_call_output" && item.value("call_id", "") == call_id)
      return true;
  return false;
}

}  // namespace

nlohmann::json responses_state::error_body(const std::string& message) {
  return {{"error", {{"message", message}, {"type", "invalid_request_error"}, {"param", "previous_response_id"}, {"code", nullptr}}}};
}

responses_state::admitted responses_state::admit(const nlohmann::json& request) {
  admitted out{request, {}};
  auto input = input_items(request);
  if (!request.contains("previous_response_id") || request["previous_response_id"].is_null()) {
    out.request["input"] = input;
    return out;
  }
  const auto& previous = request["previous_response_id"];
  const std::string id = previous.is_string() ? previous.get<std::string>() : previous.dump();
  std::lock_guard lock(mutex_);
  auto it = kept_.find(id);
  if (it == kept_.end()) return {{}, "Previous response with id '" + id + "' not found."};
  for (const auto& call : it->second.pending_calls)
    if (!answers_call(input, call)) return {{}, "No tool output found for function call " + call + "."};
  auto items = it->second.items;
  for (auto& item : input) items.push_back(std::move(item));
  out.request.erase("previous_response_id");
  out.request["input"] = std::move(items);
  return out;
}

std::string responses_state::keep(const nlohmann::json& admitted_request, const nlohmann::json& answer) {
  std::lock_guard lock(mutex_);
  const auto id = "resp_" + std::to_string(next_++);
  const auto store = admitted_request.find("store");
  if (store != admitted_request.end() && store->is_boolean() && !store->get<bool>()) return id;
  kept k{admitted_request.value("input", nlohmann::json::array()), {}};
  for (const auto& item : answer.value("output", nlohmann::json::array())) {
    k.items.push_back(item);
    if (item.value("type", "") == "function_call") k.pending_calls.push_back(item.value("call_id", ""));
  }
  kept_[id] = std::move(k);
  return id;
}

}  // namespace gistproxy::testing
