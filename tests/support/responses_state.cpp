#include "tests/support/responses_state.hpp"

#include <algorithm>

#include "rewrite/request_target.hpp"
#include "tests/support/scripted_model.hpp"

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

std::string query_value(std::string_view target, std::string_view name) {
  std::string_view rest = rewrite::query_of(target);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const auto pair = rest.substr(0, amp);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == name) return eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return {};
}

responses_state::served not_found(const std::string& id) {
  return {404, responses_state::error_body("Response with id '" + id + "' not found.", "response_id").dump()};
}

}  // namespace

nlohmann::json responses_state::error_body(const std::string& message, const char* param) {
  return {{"error", {{"message", message}, {"type", "invalid_request_error"}, {"param", param}, {"code", nullptr}}}};
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
  // previous_response_id stays: the API echoes it in the response.
  out.request["input"] = std::move(items);
  return out;
}

std::string responses_state::keep(const nlohmann::json& admitted_request, const nlohmann::json& answer) {
  std::lock_guard lock(mutex_);
  const auto id = prefix_ + std::to_string(next_++);
  const auto store = admitted_request.find("store");
  if (store != admitted_request.end() && store->is_boolean() && !store->get<bool>()) return id;
  kept k{admitted_request.value("input", nlohmann::json::array()), {}, answer, {}};
  // Every kept item has an id, as the API gives one to each input item.
  for (auto& item : k.input)
    if (item.is_object() && !item.contains("id")) item["id"] = "item_" + std::to_string(next_item_++);
  k.items = k.input;
  k.response["id"] = id;
  for (const auto& item : answer.value("output", nlohmann::json::array())) {
    k.items.push_back(item);
    if (item.value("type", "") == "function_call") k.pending_calls.push_back(item.value("call_id", ""));
  }
  kept_[id] = std::move(k);
  return id;
}

std::optional<responses_state::served> responses_state::serve(std::string_view method, std::string_view target) {
  auto path = rewrite::path_of(target);
  constexpr std::string_view prefix = "/v1/responses/";
  if (!path.starts_with(prefix) || (method != "GET" && method != "DELETE")) return std::nullopt;
  path.remove_prefix(prefix.size());
  const auto slash = path.find('/');
  const std::string id(path.substr(0, slash));
  const auto rest = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
  std::lock_guard lock(mutex_);
  auto it = kept_.find(id);
  if (it == kept_.end()) return not_found(id);
  if (rest == "/input_items" && method == "GET") return list_input_items(it->second, target);
  if (!rest.empty()) return served{404, R"({"error":"mock: no such route"})"};
  if (method == "DELETE") {
    kept_.erase(it);
    return served{200, nlohmann::json{{"id", id}, {"object", "response"}, {"deleted", true}}.dump()};
  }
  if (query_value(target, "stream") == "true") return served{200, render_responses_events(it->second.response), "text/event-stream"};
  return served{200, it->second.response.dump()};
}

responses_state::served responses_state::list_input_items(const kept& k, std::string_view target) const {
  std::vector<nlohmann::json> items(k.input.begin(), k.input.end());
  if (query_value(target, "order") != "asc") std::reverse(items.begin(), items.end());  // desc by default
  std::size_t from = 0;
  if (const auto after = query_value(target, "after"); !after.empty()) {
    while (from < items.size() && items[from].value("id", "") != after) ++from;
    if (from == items.size()) return {400, error_body("No item with id '" + after + "' found.", "after").dump()};
    ++from;
  }
  const auto limit_text = query_value(target, "limit");
  const long limit = limit_text.empty() ? 20 : std::stol(limit_text);
  if (limit < 1 || limit > 100) return {400, error_body("limit must be between 1 and 100.", "limit").dump()};
  nlohmann::json data = nlohmann::json::array();
  for (std::size_t i = from; i < items.size() && data.size() < std::size_t(limit); ++i) data.push_back(items[i]);
  nlohmann::json list = {{"object", "list"}, {"data", data}, {"has_more", from + data.size() < items.size()}};
  list["first_id"] = data.empty() ? nlohmann::json(nullptr) : data.front()["id"];
  list["last_id"] = data.empty() ? nlohmann::json(nullptr) : data.back()["id"];
  return {200, list.dump()};
}

}  // namespace gistproxy::testing
