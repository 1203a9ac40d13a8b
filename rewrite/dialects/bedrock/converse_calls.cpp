// Bedrock Converse answers: read_blob calls are toolUse blocks of
// output.message.content; results go back as toolResult blocks of a user
// message. The answer is the upstream's: every member is read through checked
// accessors (a wrong type reads as absent).
#include <nlohmann/json.hpp>

#include "rewrite/dialects/bedrock/converse_api.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/tree.hpp"

namespace gistproxy::rewrite {
namespace {

using njson = nlohmann::json;

const njson& answer_content(const njson& response) {
  return checked::array_at(checked::object_at(checked::object_at(response, "output"), "message"), "content");
}

bool is_call(const njson& block) { return checked::member(block, "toolUse").is_object(); }

bool calls_tool(const njson& block, std::string_view tool_name) {
  return checked::string_is(checked::object_at(block, "toolUse"), "name", tool_name);
}

bool blank(std::string_view text) { return text.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// A text block with nothing but whitespace, which Bedrock refuses in a request.
bool blank_text_block(const njson& block) {
  const auto& text = checked::member(block, "text");
  return text.is_string() && block.size() == 1 && blank(text.get_ref<const std::string&>());
}

// Bedrock refuses a text block that is empty or only whitespace (and an error
// result without content): such a read says so in words instead.
std::string result_text(const call_result& r) {
  if (!blank(r.text)) return r.text;
  return r.is_error ? "error" : "(no content)";
}

}  // namespace

std::string converse_last_hop_notice(std::string_view tool_name) {
  return "Do not call " + std::string(tool_name) + " again: answer with what it returned.";
}

response_calls converse_wire::find_blob_calls(const nlohmann::json& response, std::string_view tool_name) const {
  response_calls out;
  for (const auto& block : answer_content(response)) {
    if (!is_call(block)) continue;
    if (!calls_tool(block, tool_name)) {
      ++out.client_calls;
      continue;
    }
    const auto& call = checked::object_at(block, "toolUse");
    const auto& input = checked::member(call, "input");
    out.blob_calls.push_back({checked::string_at(call, "toolUseId"), input.is_null() ? "{}" : checked::dump(input)});
  }
  return out;
}

void converse_wire::remove_blob_calls(nlohmann::json& response, std::string_view tool_name) const {
  if (!checked::member(checked::member(response, "output"), "message").is_object()) return;
  auto& message = response["output"]["message"];
  if (!checked::member(message, "content").is_array()) return;
  njson kept = njson::array();
  bool client_calls = false;
  for (const auto& block : message["content"]) {
    if (is_call(block) && calls_tool(block, tool_name)) continue;
    client_calls = client_calls || is_call(block);
    kept.push_back(block);
  }
  if (kept.size() == message["content"].size()) return;
  message["content"] = std::move(kept);
  if (!client_calls && checked::string_is(response, "stopReason", "tool_use")) response["stopReason"] = "end_turn";
}

// The model's turn as it came (text, reasoning with its signature, read_blob
// calls), minus the client's calls (the model re-issues them after reading)
// and blank text blocks (Bedrock refuses them in a request).
// toolConfig is never touched: see converse_api.hpp for the last hop.
std::optional<std::string> converse_wire::continue_conversation(std::string_view body, const nlohmann::json& response,
                                                                   std::string_view tool_name,
                                                                   const std::vector<call_result>& results,
                                                                   bool last_hop) const {
  auto top = read_top_level(body);
  if (!top || !top->member("messages") || body[top->member("messages")->begin] != '[') return std::nullopt;
  njson assistant = njson::array();
  for (const auto& block : answer_content(response))
    if ((!is_call(block) || calls_tool(block, tool_name)) && !blank_text_block(block)) assistant.push_back(block);
  njson user = njson::array();
  for (const auto& r : results)
    user.push_back({{"toolResult",
                     {{"toolUseId", r.id}, {"content", {{{"text", result_text(r)}}}}, {"status", r.is_error ? "error" : "success"}}}});
  // Tool results first, then text: the order Bedrock's Claude models require.
  if (last_hop) user.push_back({{"text", converse_last_hop_notice(tool_name)}});
  const std::string items = checked::dump(njson{{"role", "assistant"}, {"content", std::move(assistant)}}) + "," +
                            checked::dump(njson{{"role", "user"}, {"content", std::move(user)}});
  return append_to_array(body, *top->member("messages"), items);
}

// Bedrock's inputTokens are the uncached ones only (totalTokens adds the
// cache reads and writes on top, as Anthropic's input_tokens do); per the
// GenAI conventions, input tokens include cache reads and writes.
token_usage converse_wire::usage_from_fields(const usage_fields& u) const {
  token_usage out;
  if (auto in = u.get("inputTokens")) {
    out.cache_read_tokens = u.get_or_zero("cacheReadInputTokens");
    out.cache_write_tokens = u.get_or_zero("cacheWriteInputTokens");
    out.input_tokens = saturating_sum(*in, out.cache_read_tokens, out.cache_write_tokens);
  }
  if (auto o = u.get("outputTokens")) out.output_tokens = *o;
  return out;
}

// A stream's usage comes once, in its last event (metadata).
void converse_wire::usage_from_event(std::string_view event, std::string_view data, token_usage& usage) const {
  if (event != "metadata") return;
  auto got = usage_from_response(json::parse_checked(data));
  if (got.input_tokens >= 0) {
    usage.input_tokens = got.input_tokens;
    usage.cache_read_tokens = got.cache_read_tokens;
    usage.cache_write_tokens = got.cache_write_tokens;
  }
  if (got.output_tokens >= 0) usage.output_tokens = got.output_tokens;
}

}  // namespace gistproxy::rewrite
