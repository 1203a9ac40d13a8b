// An agent conversation of any of the five APIs, as a client sends it: a
// short opening, then one call of the tool "run" and its output per entry
// of `outputs` (a small head: no API's read_blob is a rounding error of it).
// The same outputs, the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gistproxy::testing {

// `api`: chat, responses, messages, gemini or converse (Bedrock Converse);
// `ask`: the opening (the scripted model's script is chosen by its words).
inline std::string body_of(const std::string& api, const std::vector<std::string>& outputs,
                           const std::string& ask = "check the service") {
  nlohmann::json items = nlohmann::json::array();
  if (api == "chat" || api == "messages") items.push_back({{"role", "user"}, {"content", ask}});
  if (api == "responses") items.push_back({{"role", "user"}, {"content", ask}});
  if (api == "gemini") items.push_back({{"role", "user"}, {"parts", {{{"text", ask}}}}});
  if (api == "converse") items.push_back({{"role", "user"}, {"content", {{{"text", ask}}}}});
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto id = "c" + std::to_string(i);
    const auto& out = outputs[i];
    if (api == "chat") {
      items.push_back({{"role", "assistant"}, {"tool_calls", {{{"id", id}, {"type", "function"}, {"function", {{"name", "run"}, {"arguments", "{}"}}}}}}});
      items.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", out}});
    } else if (api == "responses") {
      items.push_back({{"type", "function_call"}, {"call_id", id}, {"name", "run"}, {"arguments", "{}"}});
      items.push_back({{"type", "function_call_output"}, {"call_id", id}, {"output", out}});
    } else if (api == "messages") {
      items.push_back({{"role", "assistant"}, {"content", {{{"type", "tool_use"}, {"id", id}, {"name", "run"}, {"input", nlohmann::json::object()}}}}});
      items.push_back({{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", id}, {"content", out}}}}});
    } else if (api == "gemini") {
      items.push_back({{"role", "model"}, {"parts", {{{"functionCall", {{"name", "run"}, {"args", nlohmann::json::object()}}}}}}});
      items.push_back({{"role", "user"}, {"parts", {{{"functionResponse", {{"name", "run"}, {"response", {{"result", out}}}}}}}}});
    } else {
      items.push_back({{"role", "assistant"}, {"content", {{{"toolUse", {{"toolUseId", id}, {"name", "run"}, {"input", nlohmann::json::object()}}}}}}});
      items.push_back({{"role", "user"}, {"content", {{{"toolResult", {{"toolUseId", id}, {"content", {{{"text", out}}}}}}}}}});
    }
  }
  if (api == "chat") return nlohmann::json{{"model", "gpt-4o"}, {"messages", items}, {"tools", {{{"type", "function"}, {"function", {{"name", "run"}}}}}}}.dump();
  if (api == "responses") return nlohmann::json{{"model", "gpt-5"}, {"input", items}, {"tools", {{{"type", "function"}, {"name", "run"}}}}}.dump();
  if (api == "messages")
    return nlohmann::json{{"model", "claude-sonnet-4-5"}, {"max_tokens", 100}, {"messages", items}, {"tools", {{{"name", "run"}, {"input_schema", {{"type", "object"}}}}}}}.dump();
  if (api == "gemini") return nlohmann::json{{"contents", items}, {"tools", {{{"functionDeclarations", {{{"name", "run"}}}}}}}}.dump();
  return nlohmann::json{{"messages", items}, {"toolConfig", {{"tools", {{{"toolSpec", {{"name", "run"}, {"inputSchema", {{"json", {{"type", "object"}}}}}}}}}}}}}.dump();
}

// A tool output of about `bytes` bytes of log lines, salted.
inline std::string log_output(const std::string& salt, std::size_t bytes) {
  std::string s;
  for (int i = 0; s.size() < bytes; ++i) s += salt + " line " + std::to_string(i) + ": request served in " + std::to_string(i % 97) + " ms\n";
  return s;
}

}  // namespace gistproxy::testing
