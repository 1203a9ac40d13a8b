// The scripted model's answers as each API writes them: whole JSON bodies
// and streams (SSE, AWS event-stream), with the usage every hop reports.
#include "tests/support/scripted_model.hpp"
#include "tests/support/agent_plan.hpp"

namespace gistproxy::testing {

nlohmann::json gemini_parts(const model_turn& turn) {
  nlohmann::json parts = nlohmann::json::array();
  if (turn.calls.empty()) parts.push_back({{"text", turn.text}});
  for (const auto& c : turn.calls) {
    nlohmann::json part = {{"functionCall", {{"id", c.id}, {"name", c.name}, {"args", c.arguments}}}};
    if (c.name == "read_blob") part["thoughtSignature"] = gemini_signature_of(c.id);
    parts.push_back(std::move(part));
  }
  return parts;
}

// Every hop: 100 input tokens, 64 of them read from the provider's prompt
// cache (Anthropic: 16 more written to it), 10 output tokens.
const nlohmann::json gemini_usage = {
    {"promptTokenCount", 100}, {"cachedContentTokenCount", 64}, {"candidatesTokenCount", 10}, {"totalTokenCount", 110}};
const nlohmann::json chat_usage = {{"prompt_tokens", 100}, {"completion_tokens", 10}, {"total_tokens", 110},
                                   {"prompt_tokens_details", {{"cached_tokens", 64}, {"audio_tokens", 0}}}};
const nlohmann::json responses_usage = {{"input_tokens", 100}, {"input_tokens_details", {{"cached_tokens", 64}}},
                                        {"output_tokens", 10}, {"output_tokens_details", {{"reasoning_tokens", 0}}},
                                        {"total_tokens", 110}};
nlohmann::json messages_usage(int output_tokens) {
  return {{"input_tokens", 20}, {"cache_creation_input_tokens", 16}, {"cache_read_input_tokens", 64},
          {"output_tokens", output_tokens}};
}

// Bedrock's inputTokens are the uncached ones (as Anthropic's input_tokens).
nlohmann::json converse_usage(int output_tokens) {
  return {{"inputTokens", 20}, {"outputTokens", output_tokens}, {"totalTokens", 100 + output_tokens},
          {"cacheReadInputTokens", 64}, {"cacheWriteInputTokens", 16}};
}

nlohmann::json converse_content(const model_turn& turn) {
  nlohmann::json content = nlohmann::json::array();
  if (turn.calls.empty()) content.push_back({{"text", turn.text}});
  for (const auto& c : turn.calls) content.push_back({{"toolUse", {{"toolUseId", c.id}, {"name", c.name}, {"input", c.arguments}}}});
  return content;
}

nlohmann::json render_response(llm_api api, const model_turn& turn, const std::string& model, const nlohmann::json& request) {
  if (api == llm_api::converse) {
    // Converse names no model in its answer; an error is {"message"} (its type is a header).
    if (turn.status != 200) return {{"message", "mock failure"}};
    return {{"output", {{"message", {{"role", "assistant"}, {"content", converse_content(turn)}}}}},
            {"stopReason", turn.calls.empty() ? "end_turn" : "tool_use"},
            {"usage", converse_usage(10)},
            {"metrics", {{"latencyMs", 120}}}};
  }
  if (api == llm_api::gemini) {
    if (turn.status != 200)
      return {{"error", {{"code", turn.status}, {"message", "mock failure"}, {"status", turn.status == 400 ? "INVALID_ARGUMENT" : "INTERNAL"}}}};
    return {{"candidates", {{{"content", {{"role", "model"}, {"parts", gemini_parts(turn)}}}, {"finishReason", "STOP"}, {"index", 0}}}},
            {"usageMetadata", gemini_usage}, {"modelVersion", model}, {"responseId", "mock-response"}};
  }
  if (turn.status != 200) {
    if (api == llm_api::messages) return {{"type", "error"}, {"error", {{"type", "api_error"}, {"message", "mock failure"}}}};
    return {{"error", {{"message", "mock failure"}, {"type", "server_error"}, {"code", nullptr}}}};
  }
  if (api == llm_api::chat) {
    nlohmann::json message = {{"role", "assistant"}, {"content", turn.calls.empty() ? nlohmann::json(turn.text) : nlohmann::json()}};
    if (!turn.calls.empty()) {
      message["tool_calls"] = nlohmann::json::array();
      for (const auto& c : turn.calls)
        message["tool_calls"].push_back({{"id", c.id}, {"type", "function"},
                                         {"function", {{"name", c.name}, {"arguments", c.arguments.dump()}}}});
    }
    return {{"id", "chatcmpl-mock"}, {"object", "chat.completion"}, {"created", 1700000000}, {"model", model},
            {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", turn.calls.empty() ? "stop" : "tool_calls"}}}},
            {"usage", chat_usage}};
  }
  if (api == llm_api::responses) {
    nlohmann::json output = nlohmann::json::array();
    if (turn.calls.empty())
      output.push_back({{"type", "message"}, {"id", "msg_mock"}, {"role", "assistant"}, {"status", "completed"},
                        {"content", {{{"type", "output_text"}, {"text", turn.text}, {"annotations", nlohmann::json::array()}}}}});
    for (const auto& c : turn.calls)
      output.push_back({{"type", "function_call"}, {"id", "fc_" + c.id}, {"call_id", c.id}, {"name", c.name},
                        {"arguments", c.arguments.dump()}, {"status", "completed"}});
    nlohmann::json response = {{"id", "resp_mock"}, {"object", "response"}, {"status", "completed"}, {"model", model},
                               {"output", output}, {"usage", responses_usage}};
    // The real API echoes the request's tools, tool_choice and previous_response_id in every response object.
    const bool asked = request.is_object();
    response["tools"] = asked && request.contains("tools") ? request["tools"] : nlohmann::json::array();
    response["tool_choice"] = asked && request.contains("tool_choice") ? request["tool_choice"] : nlohmann::json("auto");
    response["previous_response_id"] = asked ? request.value("previous_response_id", nlohmann::json()) : nlohmann::json();
    return response;
  }
  nlohmann::json content = nlohmann::json::array();
  if (turn.calls.empty()) content.push_back({{"type", "text"}, {"text", turn.text}});
  for (const auto& c : turn.calls) content.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", c.arguments}});
  return {{"id", mock_message_id(turn)}, {"type", "message"}, {"role", "assistant"}, {"model", model}, {"content", content},
          {"stop_reason", turn.calls.empty() ? "end_turn" : "tool_use"}, {"stop_sequence", nullptr},
          {"usage", messages_usage(10)}};
}

std::string render_messages_stream(const model_turn& turn, const std::string& model) {
  auto ev = [](const std::string& name, const nlohmann::json& data) { return "event: " + name + "\ndata: " + data.dump() + "\n\n"; };
  std::string out;
  out += ev("message_start", {{"type", "message_start"},
                              {"message", {{"id", mock_message_id(turn)}, {"type", "message"}, {"role", "assistant"}, {"model", model},
                                           {"content", nlohmann::json::array()}, {"stop_reason", nullptr}, {"stop_sequence", nullptr},
                                           {"usage", messages_usage(1)}}}});
  out += ev("ping", {{"type", "ping"}});
  int index = 0;
  if (turn.calls.empty() || !turn.text.empty()) {
    auto text = turn.calls.empty() ? turn.text : turn.text;
    out += ev("content_block_start", {{"type", "content_block_start"}, {"index", index}, {"content_block", {{"type", "text"}, {"text", ""}}}});
    auto half = text.size() / 2;
    out += ev("content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "text_delta"}, {"text", text.substr(0, half)}}}});
    out += ev("content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "text_delta"}, {"text", text.substr(half)}}}});
    out += ev("content_block_stop", {{"type", "content_block_stop"}, {"index", index}});
    ++index;
  }
  for (const auto& c : turn.calls) {
    out += ev("content_block_start", {{"type", "content_block_start"}, {"index", index},
                                      {"content_block", {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", nlohmann::json::object()}}}});
    auto args = c.arguments.dump();
    auto half = args.size() / 2;
    out += ev("content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "input_json_delta"}, {"partial_json", ""}}}});
    out += ev("content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "input_json_delta"}, {"partial_json", args.substr(0, half)}}}});
    out += ev("content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", {{"type", "input_json_delta"}, {"partial_json", args.substr(half)}}}});
    out += ev("content_block_stop", {{"type", "content_block_stop"}, {"index", index}});
    ++index;
  }
  out += ev("message_delta", {{"type", "message_delta"}, {"delta", {{"stop_reason", turn.calls.empty() ? "end_turn" : "tool_use"}, {"stop_sequence", nullptr}}},
                              {"usage", {{"output_tokens", 10}}}});
  out += ev("message_stop", {{"type", "message_stop"}});
  return out;
}

std::string render_chat_stream(const model_turn& turn, const std::string& model, bool include_usage) {
  auto chunk = [&](const nlohmann::json& delta, const nlohmann::json& finish) {
    nlohmann::json c = {{"id", "chatcmpl-mock"}, {"object", "chat.completion.chunk"}, {"created", 1700000000}, {"model", model},
                        {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
    if (include_usage) c["usage"] = nullptr;
    return "data: " + c.dump() + "\n\n";
  };
  std::string out = chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
  if (turn.calls.empty()) {
    std::size_t pos = 0;
    while (pos < turn.text.size()) {  // word by word
      auto next = turn.text.find(' ', pos + 1);
      if (next == std::string::npos) next = turn.text.size();
      out += chunk({{"content", turn.text.substr(pos, next - pos)}}, nullptr);
      pos = next;
    }
  }
  for (std::size_t i = 0; i < turn.calls.size(); ++i) {
    const auto& c = turn.calls[i];
    auto args = c.arguments.dump();
    out += chunk({{"tool_calls", {{{"index", i}, {"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", ""}}}}}}}, nullptr);
    out += chunk({{"tool_calls", {{{"index", i}, {"function", {{"arguments", args.substr(0, args.size() / 2)}}}}}}}, nullptr);
    out += chunk({{"tool_calls", {{{"index", i}, {"function", {{"arguments", args.substr(args.size() / 2)}}}}}}}, nullptr);
  }
  out += chunk(nlohmann::json::object(), turn.calls.empty() ? "stop" : "tool_calls");
  if (include_usage)
    out += "data: " + nlohmann::json{{"id", "chatcmpl-mock"}, {"object", "chat.completion.chunk"}, {"created", 1700000000},
                                     {"model", model}, {"choices", nlohmann::json::array()},
                                     {"usage", chat_usage}}.dump() + "\n\n";
  out += "data: [DONE]\n\n";
  return out;
}

std::string render_responses_stream(const model_turn& turn, const std::string& model, const nlohmann::json& request) {
  return render_responses_events(render_response(llm_api::responses, turn, model, request));
}

std::string render_responses_events(const nlohmann::json& full) {
  int seq = 0;
  auto ev = [&](const std::string& type, nlohmann::json data) {
    data["type"] = type;
    data["sequence_number"] = seq++;
    return "event: " + type + "\ndata: " + data.dump() + "\n\n";
  };
  auto in_progress = full;
  in_progress["status"] = "in_progress";
  in_progress["output"] = nlohmann::json::array();
  in_progress.erase("usage");
  std::string out = ev("response.created", {{"response", in_progress}});
  out += ev("response.in_progress", {{"response", in_progress}});
  int index = 0;
  for (const auto& item : full["output"]) {
    auto added = item;
    if (item["type"] == "message") {
      added["content"] = nlohmann::json::array();
      added["status"] = "in_progress";
      out += ev("response.output_item.added", {{"output_index", index}, {"item", added}});
      const std::string text = item["content"][0]["text"];
      out += ev("response.content_part.added", {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0},
                                                {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", nlohmann::json::array()}}}});
      out += ev("response.output_text.delta", {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0}, {"delta", text.substr(0, text.size() / 2)}});
      out += ev("response.output_text.delta", {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0}, {"delta", text.substr(text.size() / 2)}});
      out += ev("response.output_text.done", {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0}, {"text", text}});
      out += ev("response.content_part.done", {{"item_id", item["id"]}, {"output_index", index}, {"content_index", 0}, {"part", item["content"][0]}});
    } else {
      added["arguments"] = "";
      added["status"] = "in_progress";
      out += ev("response.output_item.added", {{"output_index", index}, {"item", added}});
      const std::string args = item["arguments"];
      out += ev("response.function_call_arguments.delta", {{"item_id", item["id"]}, {"output_index", index}, {"delta", args.substr(0, args.size() / 2)}});
      out += ev("response.function_call_arguments.delta", {{"item_id", item["id"]}, {"output_index", index}, {"delta", args.substr(args.size() / 2)}});
      out += ev("response.function_call_arguments.done", {{"item_id", item["id"]}, {"output_index", index}, {"arguments", args}});
    }
    out += ev("response.output_item.done", {{"output_index", index}, {"item", item}});
    ++index;
  }
  out += ev("response.completed", {{"response", full}});
  return out;
}

std::string render_gemini_stream(const model_turn& turn, const std::string& model) {
  auto event = [&](nlohmann::json parts, bool last) {
    nlohmann::json candidate = {{"content", {{"role", "model"}, {"parts", std::move(parts)}}}, {"index", 0}};
    if (last) candidate["finishReason"] = "STOP";
    nlohmann::json r = {{"candidates", {candidate}}, {"modelVersion", model}, {"responseId", "mock-response"}};
    r["usageMetadata"] = last ? gemini_usage : nlohmann::json{{"promptTokenCount", 100}, {"totalTokenCount", 100}};
    return "data: " + r.dump() + "\r\n\r\n";
  };
  if (turn.calls.empty()) {
    auto half = turn.text.size() / 2;
    return event({{{"text", turn.text.substr(0, half)}}}, false) + event({{{"text", turn.text.substr(half)}}}, true);
  }
  return event(gemini_parts(turn), true);
}

std::string render_converse_stream(const model_turn& turn, const std::string&) {
  // Every payload may carry "p", AWS's padding; some of these do.
  auto ev = [](const std::string& name, const nlohmann::json& data) { return "event: " + name + "\ndata: " + data.dump() + "\n\n"; };
  std::string out = ev("messageStart", {{"role", "assistant"}, {"p", "abcdefgh"}});
  int index = 0;
  if (turn.calls.empty()) {  // text has no contentBlockStart
    const auto half = turn.text.size() / 2;
    out += ev("contentBlockDelta", {{"contentBlockIndex", index}, {"delta", {{"text", turn.text.substr(0, half)}}}, {"p", "abc"}});
    out += ev("contentBlockDelta", {{"contentBlockIndex", index}, {"delta", {{"text", turn.text.substr(half)}}}});
    out += ev("contentBlockStop", {{"contentBlockIndex", index}});
    ++index;
  }
  for (const auto& c : turn.calls) {
    out += ev("contentBlockStart", {{"contentBlockIndex", index}, {"start", {{"toolUse", {{"toolUseId", c.id}, {"name", c.name}}}}}});
    const auto args = c.arguments.dump();
    const auto third = args.size() / 3;
    for (const auto& piece : {args.substr(0, third), args.substr(third, third), args.substr(2 * third)})
      out += ev("contentBlockDelta", {{"contentBlockIndex", index}, {"delta", {{"toolUse", {{"input", piece}}}}}});
    out += ev("contentBlockStop", {{"contentBlockIndex", index}, {"p", "ab"}});
    ++index;
  }
  out += ev("messageStop", {{"stopReason", turn.calls.empty() ? "end_turn" : "tool_use"}});
  out += ev("metadata", {{"usage", converse_usage(10)}, {"metrics", {{"latencyMs", 120}}}});
  return out;
}

}  // namespace gistproxy::testing
