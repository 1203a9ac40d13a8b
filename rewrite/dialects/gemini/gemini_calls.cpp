// Gemini answers: read_blob calls are functionCall parts of the first
// candidate's content; results go back as functionResponse parts of a user
// turn. The response is the upstream's: every member is read through checked
// accessors (a wrong type reads as absent).
#include <nlohmann/json.hpp>

#include "rewrite/dialects/gemini/gemini_api.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"

namespace gistproxy::rewrite {
namespace {

// Calls without an id of their own (older models) are answered by position.
constexpr std::string_view synthetic_id_prefix = "gistproxy-call-";

const nlohmann::json& first_content(const nlohmann::json& response) {
  return checked::object_at(checked::element(checked::array_at(response, "candidates"), 0), "content");
}

bool call_named(const nlohmann::json& part, std::string_view tool_name) {
  return checked::string_is(checked::object_at(part, "functionCall"), "name", tool_name);
}

bool is_call(const nlohmann::json& part) { return checked::member(part, "functionCall").is_object(); }

std::string call_id(const nlohmann::json& part, std::size_t position) {
  auto id = checked::string_at(checked::object_at(part, "functionCall"), "id");
  return id.empty() ? std::string(synthetic_id_prefix) + std::to_string(position) : id;
}

}  // namespace

response_calls gemini_wire::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
  response_calls out;
  std::size_t position = 0;
  for (const auto& part : checked::array_at(first_content(response), "parts")) {
    if (!is_call(part)) continue;
    if (!call_named(part, tool_name)) {
      ++out.client_calls;
      continue;
    }
    const auto& args = checked::member(checked::object_at(part, "functionCall"), "args");
    out.blob_calls.push_back({call_id(part, position++), args.is_null() ? "{}" : checked::dump(args)});
  }
  return out;
}

void gemini_wire::remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const {
  if (!checked::member(response, "candidates").is_array()) return;
  for (auto& candidate : response["candidates"]) {
    if (!checked::member(candidate, "content").is_object()) continue;
    auto& content = candidate["content"];
    if (!checked::member(content, "parts").is_array()) continue;
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& part : content["parts"])
      if (!call_named(part, tool_name)) kept.push_back(part);
    content["parts"] = std::move(kept);
  }
}

std::optional<std::string> gemini_wire::continue_conversation(std::string_view body, const nlohmann::json& response,
                                                                 std::string_view tool_name,
                                                                 const std::vector<call_result>& results,
                                                                 bool last_hop) const {
  auto top = read_top_level(body);
  if (!top || !top->member("contents") || body[top->member("contents")->begin] != '[') return std::nullopt;
  // The model's turn as it came (text, thoughts, read_blob calls, each part
  // with its thoughtSignature), minus the client's calls: the model re-issues
  // them after reading.
  nlohmann::json model_parts = nlohmann::json::array();
  for (const auto& part : checked::array_at(first_content(response), "parts"))
    if (!is_call(part) || call_named(part, tool_name)) model_parts.push_back(part);
  nlohmann::json user_parts = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json call = {{"name", tool_name},
                           {"response", {{r.is_error ? "error" : "result", r.text}}}};
    if (!r.id.starts_with(synthetic_id_prefix)) call["id"] = r.id;
    user_parts.push_back({{"functionResponse", std::move(call)}});
  }
  const std::string items = checked::dump(nlohmann::json{{"role", "model"}, {"parts", std::move(model_parts)}}) + "," +
                            checked::dump(nlohmann::json{{"role", "user"}, {"parts", std::move(user_parts)}});
  auto next = append_to_array(body, *top->member("contents"), items);
  if (!last_hop) return next;
  auto again = read_top_level(next);
  if (!again) return std::nullopt;
  // The REST API takes either spelling; set the one the client used.
  const std::string_view key = again->member("tool_config") ? "tool_config" : "toolConfig";
  return set_member(next, *again, key, R"({"functionCallingConfig":{"mode":"NONE"}})");
}

token_usage gemini_wire::usage_from_fields(const usage_fields& u) const {
  token_usage out;
  if (auto in = u.get("promptTokenCount")) {
    out.input_tokens = *in;  // includes cachedContentTokenCount
    out.cache_read_tokens = u.get_or_zero("cachedContentTokenCount");
  }
  auto candidates = u.get("candidatesTokenCount");
  auto thoughts = u.get("thoughtsTokenCount");
  // Thinking tokens are billed as output.
  if (candidates || thoughts) out.output_tokens = candidates.value_or(0) + thoughts.value_or(0);
  return out;
}

void gemini_wire::usage_from_event(std::string_view, std::string_view data, token_usage& usage) const {
  // Every chunk may carry usageMetadata; the counts are cumulative.
  if (data.find("\"usageMetadata\"") == std::string_view::npos) return;
  auto got = usage_from_response(json::parse_checked(data));
  if (got.input_tokens >= 0) {
    usage.input_tokens = got.input_tokens;
    usage.cache_read_tokens = got.cache_read_tokens;
    usage.cache_write_tokens = got.cache_write_tokens;
  }
  if (got.output_tokens >= 0) usage.output_tokens = got.output_tokens;
}

}  // namespace gistproxy::rewrite
