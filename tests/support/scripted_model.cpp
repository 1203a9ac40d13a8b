#include "tests/support/scripted_model.hpp"
#include "tests/support/agent_plan.hpp"

#include <algorithm>
#include <regex>

namespace gistproxy::testing {
namespace {

struct conversation {
  std::string first_user;
  std::string handle;                      // from a reference in the conversation
  std::vector<std::string> handles;        // every reference's, in order, once each
  std::vector<std::string> blob_results;   // contents of results of our rb_ calls
  bool client_result = false;              // a result for the client's tool came back
  bool agent_read = false;                 // the agent's Read tool answered (the "agent reads" script)
  bool tools_forbidden = false;            // tool_choice none
  bool signature_lost = false;             // Gemini: a read_blob call came back without its thoughtSignature
};

std::string text_of(const nlohmann::json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>();
  return out;
}

void find_handle(conversation& c, const std::string& text) {
  static const std::regex ref(R"re(read_blob\("([0-9a-f]{16,64})"\))re");
  std::smatch m;
  if (c.handle.empty() && std::regex_search(text, m, ref)) c.handle = m[1];
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ref); it != std::sregex_iterator(); ++it)
    if (std::find(c.handles.begin(), c.handles.end(), (*it)[1].str()) == c.handles.end()) c.handles.push_back((*it)[1]);
}

// Converse: content blocks keyed by shape; tool results are toolResult
// blocks whose content is a list of {"text"} items. Tools are forbidden by
// the last hop's notice: a text block after the results, "Do not call …".
template <class NoteResult>
void read_converse(const nlohmann::json& req, conversation& c, NoteResult& note_result) {
  for (const auto& msg : req.value("messages", nlohmann::json::array())) {
    const auto content = msg.value("content", nlohmann::json::array());
    const bool user = msg.value("role", "") == "user";
    if (user && c.first_user.empty()) c.first_user = text_of(content);
    if (user) find_handle(c, text_of(content));
    for (const auto& b : content)
      if (b.contains("toolResult")) note_result(b["toolResult"].value("toolUseId", ""), text_of(b["toolResult"].value("content", nlohmann::json())));
    c.tools_forbidden = user && !content.empty() && content.back().is_object() &&
                        content.back().value("text", "").rfind("Do not call ", 0) == 0;
  }
}

conversation read_conversation(llm_api api, const nlohmann::json& req) {
  conversation c;
  auto tc = req.value("tool_choice", nlohmann::json());
  c.tools_forbidden = tc == "none" || (tc.is_object() && tc.value("type", "") == "none");
  auto note_result = [&](const std::string& id, const std::string& text) {
    if (id.rfind("rb_", 0) == 0) c.blob_results.push_back(text);
    else if (id.rfind("run_", 0) == 0) c.client_result = true;
    else {
      c.agent_read |= id.rfind("toolu_read_", 0) == 0;
      find_handle(c, text);
    }
  };
  if (api == llm_api::gemini) {
    const auto config = req.value("toolConfig", nlohmann::json::object());
    c.tools_forbidden = config.is_object() && config.value("functionCallingConfig", nlohmann::json::object()).value("mode", "") == "NONE";
    for (const auto& content : req.value("contents", nlohmann::json::array())) {
      const auto parts = content.value("parts", nlohmann::json::array());
      if (content.value("role", "user") == "user" && c.first_user.empty()) c.first_user = text_of(parts);
      for (const auto& part : parts) {
        if (part.contains("functionCall")) {
          auto id = part["functionCall"].value("id", "");
          if (id.rfind("rb_", 0) == 0 && part.value("thoughtSignature", "") != gemini_signature_of(id)) c.signature_lost = true;
        }
        if (!part.contains("functionResponse")) continue;
        const auto& r = part["functionResponse"];
        const auto response = r.value("response", nlohmann::json::object());
        std::string text;
        for (const auto& [key, value] : response.items()) text += value.is_string() ? value.get<std::string>() : value.dump();
        note_result(r.value("id", ""), text);
      }
    }
    return c;
  }
  if (api == llm_api::responses) {
    if (req.value("input", nlohmann::json()).is_string()) c.first_user = req["input"];
    for (const auto& item : req.value("input", nlohmann::json::array())) {
      if (!item.is_object()) continue;
      if (item.value("role", "") == "user" && c.first_user.empty()) c.first_user = text_of(item["content"]);
      if (item.value("type", "") == "function_call_output") note_result(item.value("call_id", ""), text_of(item["output"]));
    }
    return c;
  }
  if (api == llm_api::converse) {
    read_converse(req, c, note_result);
    return c;
  }
  for (const auto& msg : req.value("messages", nlohmann::json::array())) {
    auto role = msg.value("role", "");
    if (role == "user" && c.first_user.empty()) c.first_user = text_of(msg.value("content", nlohmann::json()));
    if (role == "user") find_handle(c, text_of(msg.value("content", nlohmann::json())));  // Cline-style text results
    if (api == llm_api::chat && role == "tool") note_result(msg.value("tool_call_id", ""), text_of(msg["content"]));
    if (api == llm_api::messages && msg.value("content", nlohmann::json()).is_array())
      for (const auto& b : msg["content"])
        if (b.value("type", "") == "tool_result") note_result(b.value("tool_use_id", ""), text_of(b["content"]));
  }
  return c;
}

std::string needle_line(const std::vector<std::string>& results) {
  // The first line holding NEEDLE, skipping read_blob's own "[… match "NEEDLE"]" header.
  for (const auto& r : results) {
    std::size_t start = 0;
    while (start < r.size()) {
      auto end = r.find('\n', start);
      auto line = r.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (line.find("NEEDLE") != std::string::npos && line.rfind("[", 0) != 0) return line;
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return "no needle found";
}

}  // namespace

model_turn script_model(llm_api api, const nlohmann::json& request) {
  if (auto plan = agent_plan_turn(api, request)) return *plan;
  auto c = read_conversation(api, request);
  model_turn t;
  if (c.signature_lost) {
    t.status = 400;
    return t;
  }
  auto rb = [&](std::string id, nlohmann::json args) { t.calls.push_back({std::move(id), "read_blob", std::move(args)}); };
  const auto& u = c.first_user;
  if (auto at = u.find("agent reads "); at != std::string::npos) {
    // A real agent's own tool (Claude Code's Read) first: its output is what
    // gistproxy offloads; then read_blob on the reference; then the line.
    if (!c.agent_read) {
      auto path = u.substr(at + 12);
      path = path.substr(0, path.find_first_of(" \n"));
      t.calls.push_back({"toolu_read_0", "Read", {{"file_path", path}}});
    } else if (c.blob_results.empty() && !c.handle.empty()) {
      rb("rb_0", {{"handle", c.handle}, {"pattern", "NEEDLE"}});
    } else {
      t.text = "found: " + needle_line(c.blob_results);
    }
    return t;
  }
  if (u.find("loop forever") != std::string::npos) {
    if (c.tools_forbidden) t.text = "gave up after " + std::to_string(c.blob_results.size()) + " reads";
    else rb("rb_" + std::to_string(c.blob_results.size()), {{"handle", c.handle}, {"pattern", "NEEDLE"}});
    return t;
  }
  if (u.find("fail second hop") != std::string::npos || u.find("hang second hop") != std::string::npos) {
    if (c.blob_results.empty()) rb("rb_0", {{"handle", c.handle}, {"pattern", "NEEDLE"}});
    else t.status = u.find("hang") != std::string::npos ? 0 : 500;
    return t;
  }
  if (u.find("read it all") != std::string::npos) {  // the whole output back, then it verbatim
    if (c.blob_results.empty() && !c.handle.empty()) rb("rb_0", {{"handle", c.handle}});
    else t.text = "tool said: " + (c.blob_results.empty() ? std::string("nothing") : c.blob_results[0]);
    return t;
  }
  if (u.find("reread everything") != std::string::npos) {  // every reference back, whole, on every turn
    if (c.blob_results.empty() && !c.tools_forbidden)
      for (std::size_t i = 0; i < c.handles.size(); ++i) rb("rb_" + std::to_string(i), {{"handle", c.handles[i]}});
    if (t.calls.empty()) t.text = "read " + std::to_string(c.blob_results.size()) + " outputs back";
    return t;
  }
  if (u.find("read each new output once") != std::string::npos) {  // the newest reference back, whole, once
    if (c.blob_results.empty() && !c.tools_forbidden && !c.handles.empty()) rb("rb_0", {{"handle", c.handles.back()}});
    if (t.calls.empty()) t.text = "read " + std::to_string(c.blob_results.size()) + " outputs back";
    return t;
  }
  if (u.find("unknown handle") != std::string::npos) {
    if (c.blob_results.empty()) rb("rb_0", {{"handle", "0000000000000000"}});
    else t.text = "tool said: " + c.blob_results[0];
    return t;
  }
  if (u.find("slow second hop") != std::string::npos && !c.blob_results.empty()) t.delay_ms = 1500;
  if (u.find("truncate second hop") != std::string::npos && !c.blob_results.empty()) t.truncate = true;
  if (u.find("find the needle") != std::string::npos || u.find("two calls") != std::string::npos ||
      u.find("with client call") != std::string::npos || u.find("slow second hop") != std::string::npos ||
      u.find("truncate second hop") != std::string::npos) {
    if (c.blob_results.empty() && !c.handle.empty()) {
      rb("rb_0", {{"handle", c.handle}, {"pattern", "NEEDLE"}});
      if (u.find("two calls") != std::string::npos) rb("rb_1", {{"handle", c.handle}, {"start_line", 1}, {"end_line", 2}});
      if (u.find("with client call") != std::string::npos) t.calls.push_back({"run_0", "run", {{"cmd", "ls"}}});
      return t;
    }
    if (u.find("with client call") != std::string::npos && !c.client_result) {
      t.calls.push_back({"run_1", "run", {{"cmd", "ls"}}});
      return t;
    }
    t.text = "found: " + needle_line(c.blob_results);
    return t;
  }
  t.text = "Hello from the mock.";
  return t;
}

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
    // The real API echoes the request's tools and tool_choice in every response object.
    const bool asked = request.is_object();
    response["tools"] = asked && request.contains("tools") ? request["tools"] : nlohmann::json::array();
    response["tool_choice"] = asked && request.contains("tool_choice") ? request["tool_choice"] : nlohmann::json("auto");
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
  int seq = 0;
  auto ev = [&](const std::string& type, nlohmann::json data) {
    data["type"] = type;
    data["sequence_number"] = seq++;
    return "event: " + type + "\ndata: " + data.dump() + "\n\n";
  };
  auto full = render_response(llm_api::responses, turn, model, request);
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

std::string gemini_signature_of(const std::string& call_id) { return "c2lnbmF0dXJl-" + call_id; }

}  // namespace gistproxy::testing
