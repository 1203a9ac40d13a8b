// Requests and answers of the five APIs for the page-in scenarios of the
// scripted model (tests/support/scripted_model.hpp): what a client sends,
// and what an SDK reads back from a JSON answer or a stream.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/scripted_model.hpp"

namespace gistproxy::testing {

// A ~200 KB tool output with one NEEDLE line buried in the middle.
inline std::string haystack() {
  std::string s;
  for (int i = 0; s.size() < 200 * 1024; ++i) {
    if (i == 2500) s += "config line 2500: NEEDLE secret_port=48213\n";
    s += "config line " + std::to_string(i) + ": key_" + std::to_string(i) + "=value_" + std::to_string(i * 31 % 977) + "\n";
  }
  return s;
}

// The API whose bodies, answers and streams a cloud endpoint speaks.
inline std::string wire_api(const std::string& api) {
  if (api == "azure-chat") return "chat";
  if (api == "azure-responses") return "responses";
  if (api == "vertex-messages" || api == "bedrock-messages") return "messages";
  if (api == "vertex-gemini") return "gemini";
  return api;
}

// The scripted model's name for an API (a dialect's name); nullopt for an
// API whose client side is not written yet.
inline std::optional<llm_api> scripted_api(const std::string& named) {
  const std::string api = wire_api(named);
  if (api == "chat") return llm_api::chat;
  if (api == "responses") return llm_api::responses;
  if (api == "messages") return llm_api::messages;
  if (api == "gemini") return llm_api::gemini;
  if (api == "bedrock-converse") return llm_api::converse;
  return std::nullopt;
}

// The model request_for names (Gemini and Bedrock name it in the path).
inline std::string model_for(const std::string& api) {
  if (api == "bedrock-messages") return "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
  if (api == "vertex-messages") return "claude-sonnet-4-5@20250929";
  if (api == "vertex-gemini") return "gemini-2.5-flash";
  if (api == "azure-chat") return "gpt-4o";
  if (api == "azure-responses") return "gpt-5";
  if (api == "gemini") return "gemini-2.5-flash";
  if (api == "bedrock-converse") return "anthropic.claude-sonnet-4-5-20250929-v1:0";
  return api == "chat" ? "gpt-4o" : api == "responses" ? "gpt-5" : "claude-sonnet-4-5";
}

// A scripted turn as the API streams it.
inline std::string render_stream(const std::string& named, const model_turn& turn) {
  const auto model = model_for(named);
  const std::string api = wire_api(named);
  if (api == "gemini") return render_gemini_stream(turn, model);
  if (api == "bedrock-converse") return render_converse_stream(turn, model);
  if (api == "chat") return render_chat_stream(turn, model, true);
  if (api == "responses") return render_responses_stream(turn, model);
  return render_messages_stream(turn, model);
}

// Gemini and Bedrock choose streaming by the path; the others by "stream": true
// in the body. Bedrock's model id is percent-encoded in the path (':' as %3A).
inline std::string path_for(const std::string& api, bool stream = false) {
  if (api == "azure-chat") return "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";
  if (api == "azure-responses") return "/openai/v1/responses";
  if (api == "vertex-messages")
    return std::string("/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:") +
           (stream ? "streamRawPredict" : "rawPredict");
  if (api == "vertex-gemini")
    return std::string("/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:") +
           (stream ? "streamGenerateContent?alt=sse" : "generateContent");
  if (api == "bedrock-messages")
    return std::string("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/") + (stream ? "invoke-with-response-stream" : "invoke");
  if (api == "bedrock-converse")
    return std::string("/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/") + (stream ? "converse-stream" : "converse");
  if (api == "gemini")
    return stream ? "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" : "/v1beta/models/gemini-2.5-flash:generateContent";
  return api == "chat" ? "/v1/chat/completions" : api == "responses" ? "/v1/responses" : "/v1/messages";
}

inline std::map<std::string, std::string> key_header(const std::string& api) {
  if (api == "azure-chat" || api == "azure-responses") return {{"api-key", "sk-test"}};
  if (api == "vertex-messages" || api == "vertex-gemini" || api == "bedrock-messages") return {{"Authorization", "Bearer sk-test"}};
  if (api == "messages") return {{"x-api-key", "sk-test"}};
  if (api == "gemini") return {{"x-goog-api-key", "sk-test"}};
  if (api == "bedrock-converse") return {{"Authorization", "Bearer sk-test"}};  // a Bedrock API key
  return {{"Authorization", "sk-test"}};
}

// Whether a forwarded body forbids tool calls (the last hop). Converse has no
// tool choice that does (auto, any, tool only), and its toolConfig must stay
// as it was (Bedrock refuses toolUse blocks without it; the prompt cache keys
// on it): its last hop asks instead, in a text block after the results.
inline bool forbids_tools(const std::string& named, const std::string& body) {
  const std::string api = wire_api(named);
  auto j = nlohmann::json::parse(body);
  if (api == "bedrock-converse") {
    const auto& last = j["messages"].back();
    const auto& ask = last["content"].back();
    return last["role"] == "user" && ask.contains("text") && ask["text"].get<std::string>().rfind("Do not call ", 0) == 0;
  }
  return api == "gemini" ? j.contains("toolConfig") : j.contains("tool_choice");
}

inline nlohmann::json request_for(const std::string& named, const std::string& ask, const std::string& output);

// Claude on Vertex and Bedrock: Anthropic's body, the model in the path and
// the cloud's anthropic_version in the body.
inline nlohmann::json cloud_claude_request(const std::string& api, const std::string& ask, const std::string& output) {
  auto body = request_for("messages", ask, output);
  body.erase("model");
  body["anthropic_version"] = api == "bedrock-messages" ? "bedrock-2023-05-31" : "vertex-2023-10-16";
  return body;
}

inline nlohmann::json request_for(const std::string& named, const std::string& ask, const std::string& output) {
  if (named == "bedrock-messages" || named == "vertex-messages") return cloud_claude_request(named, ask, output);
  const std::string api = wire_api(named);
  if (api == "bedrock-converse") {
    auto spec = [](const char* name) {
      return nlohmann::json{{"toolSpec", {{"name", name}, {"inputSchema", {{"json", {{"type", "object"}}}}}}}};
    };
    return {{"messages", {{{"role", "user"}, {"content", {{{"text", ask}}}}},
                          {{"role", "assistant"}, {"content", {{{"toolUse", {{"toolUseId", "c1"}, {"name", "cat"}, {"input", nlohmann::json::object()}}}}}}},
                          {{"role", "user"}, {"content", {{{"toolResult", {{"toolUseId", "c1"}, {"content", {{{"text", output}}}}, {"status", "success"}}}}}}}}},
            {"toolConfig", {{"tools", {spec("cat"), spec("run")}}}},
            {"inferenceConfig", {{"maxTokens", 100}}}};
  }
  if (api == "gemini")
    return {{"contents", {{{"role", "user"}, {"parts", {{{"text", ask}}}}},
                          {{"role", "model"}, {"parts", {{{"functionCall", {{"name", "cat"}, {"args", nlohmann::json::object()}}}}}}},
                          {{"role", "user"}, {"parts", {{{"functionResponse", {{"name", "cat"}, {"response", {{"result", output}}}}}}}}}}},
            {"tools", {{{"functionDeclarations", {{{"name", "cat"}}, {{"name", "run"}}}}}}}};
  if (api == "chat")
    return {{"model", "gpt-4o"},
            {"messages", {{{"role", "user"}, {"content", ask}},
                          {{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"},
                                                                    {"function", {{"name", "cat"}, {"arguments", "{}"}}}}}}},
                          {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", output}}}},
            {"tools", {{{"type", "function"}, {"function", {{"name", "cat"}}}},
                       {{"type", "function"}, {"function", {{"name", "run"}}}}}}};
  if (api == "responses")
    return {{"model", "gpt-5"},
            {"input", {{{"role", "user"}, {"content", ask}},
                       {{"type", "function_call"}, {"call_id", "c1"}, {"name", "cat"}, {"arguments", "{}"}},
                       {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", output}}}},
            {"tools", {{{"type", "function"}, {"name", "cat"}}, {{"type", "function"}, {"name", "run"}}}}};
  return {{"model", "claude-sonnet-4-5"},
          {"max_tokens", 100},
          {"messages", {{{"role", "user"}, {"content", ask}},
                        {{"role", "assistant"}, {"content", {{{"type", "tool_use"}, {"id", "c1"}, {"name", "cat"}, {"input", nlohmann::json::object()}}}}},
                        {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", "c1"}, {"content", output}}}}}}},
          {"tools", {{{"name", "cat"}, {"input_schema", {{"type", "object"}}}}, {{"name", "run"}, {"input_schema", {{"type", "object"}}}}}}};
}

// The final answer's text, whatever the API.
inline std::string answer_text(const std::string& named, const nlohmann::json& r) {
  const std::string api = wire_api(named);
  if (api == "bedrock-converse") {
    std::string out;
    for (auto& b : r["output"]["message"]["content"])
      if (b.contains("text")) out += b["text"].get<std::string>();
    return out;
  }
  if (api == "gemini") {
    std::string out;
    for (auto& p : r["candidates"][0]["content"]["parts"])
      if (p.contains("text")) out += p["text"].get<std::string>();
    return out;
  }
  if (api == "chat") return r["choices"][0]["message"].value("content", "");
  if (api == "responses") {
    for (auto& item : r["output"])
      if (item["type"] == "message") return item["content"][0]["text"];
    return "";
  }
  for (auto& b : r["content"])
    if (b["type"] == "text") return b["text"];
  return "";
}

// The data of every SSE event in a response body, in order ("[DONE]" included).
inline std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    auto end = body.find('\n', pos);
    out.push_back(body.substr(pos + 6, end - pos - 6));
    pos = end;
  }
  return out;
}

// Each SSE event's name ("message" when unnamed) and data, in order.
inline std::vector<std::pair<std::string, std::string>> sse_events(const std::string& body) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string name;
  std::size_t pos = 0;
  while (pos < body.size()) {
    auto end = body.find('\n', pos);
    const auto line = body.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? body.size() : end + 1;
    if (line.rfind("event: ", 0) == 0) name = line.substr(7);
    if (line.rfind("data: ", 0) == 0) {
      out.emplace_back(name.empty() ? "message" : name, line.substr(6));
      name.clear();
    }
  }
  return out;
}

// What an SDK would assemble from a stream of any of the APIs.
struct streamed {
  std::string text;
  std::vector<std::string> client_calls;
};

inline streamed read_stream(const std::string& named, const std::string& body) {
  const std::string api = wire_api(named);
  streamed out;
  for (const auto& data : sse_data(body)) {
    if (data == "[DONE]") continue;
    auto e = nlohmann::json::parse(data);
    if (api == "bedrock-converse") {  // payloads say no event type: contentBlockDelta and contentBlockStart by shape
      if (e.contains("delta") && e["delta"].contains("text")) out.text += e["delta"]["text"].get<std::string>();
      if (e.contains("start") && e["start"].contains("toolUse")) out.client_calls.push_back(e["start"]["toolUse"]["toolUseId"]);
    } else if (api == "gemini") {
      if (!e.contains("candidates")) continue;
      for (auto& part : e["candidates"][0]["content"]["parts"]) {
        if (part.contains("text")) out.text += part["text"].get<std::string>();
        if (part.contains("functionCall")) out.client_calls.push_back(part["functionCall"]["id"]);
      }
    } else if (api == "chat") {
      if (e["choices"].empty()) continue;
      auto& d = e["choices"][0]["delta"];
      if (d.contains("content") && d["content"].is_string()) out.text += d["content"].get<std::string>();
      if (d.contains("tool_calls"))
        for (auto& t : d["tool_calls"])
          if (t.contains("id")) out.client_calls.push_back(t["id"]);
    } else if (api == "responses") {
      if (e["type"] == "response.output_text.delta") out.text += e["delta"].get<std::string>();
      if (e["type"] == "response.output_item.added" && e["item"]["type"] == "function_call")
        out.client_calls.push_back(e["item"]["call_id"]);
    } else {
      if (e["type"] == "content_block_delta" && e["delta"]["type"] == "text_delta") out.text += e["delta"]["text"].get<std::string>();
      if (e["type"] == "content_block_start" && e["content_block"]["type"] == "tool_use")
        out.client_calls.push_back(e["content_block"]["id"]);
    }
  }
  return out;
}


}  // namespace gistproxy::testing
