// A random agent conversation that grows turn by turn (one tool call and its
// output each), rendered as a request body of any of the five APIs, with the
// edits real clients make between turns. Seeded: the same seed, the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace gistproxy::testing {

class conversation {
 public:
  conversation(std::string api, std::uint32_t seed) : api_(std::move(api)), rng_(seed) {}

  // Adds a call and its output, or (one time in four) edits the conversation
  // so far; says which.
  std::string grow_or_edit(std::mt19937& rng) {
    if (calls_.size() < 3 || rng() % 4 != 0) return add(calls_.size()), "grow";
    const auto at = rng() % calls_.size();
    switch (rng() % 6) {
      case 0: calls_[at].output[rng() % calls_[at].output.size()] ^= 1; return "an older output changed";
      case 1: calls_[at].tool += "_v2"; return "a tool renamed";
      case 2: add(at); return "an item inserted mid-way";
      case 3: calls_.erase(calls_.begin() + std::ptrdiff_t(at)); return "an item removed";
      case 4: system_ += " Be brief."; return "the system prompt changed";
      default: calls_[at].output += "\nappended line\twith a tab, a quote \" and é"; return "an older output grew";
    }
  }

  // Adds a call and its output at the end: the conversation only grows.
  void grow() { add(calls_.size()); }

  std::string body() const {
    // A flipped bit can leave invalid UTF-8: written as U+FFFD, as a client's encoder would.
    const auto dump = [](const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    if (api_ == "chat") return dump(chat());
    if (api_ == "messages") return dump(messages());
    if (api_ == "responses") return dump(responses());
    if (api_ == "gemini") return dump(gemini());
    return dump(converse());
  }

 private:
  struct call {
    std::string id, tool, output;
    bool image = false;
  };

  void add(std::size_t at) {
    static const char* tools[] = {"read_file", "run_command", "grep", "list_files"};
    call c;
    c.id = "call_" + std::to_string(rng_()) + "_" + std::to_string(counter_++);
    c.tool = tools[rng_() % 4];
    c.output = text(rng_() % 5 == 0 ? 2000 + rng_() % 6000 : 50 + rng_() % 900);
    c.image = api_ == "messages" && rng_() % 9 == 0;
    calls_.insert(calls_.begin() + std::ptrdiff_t(at), std::move(c));
  }

  std::string text(std::size_t n) {
    static const char* words[] = {"config", "parse", "\"quoted\"", "path\\to\\file", "buffer", "naïve", "token", "\t"};
    std::string out;
    while (out.size() < n) {
      out += words[rng_() % 8];
      out += rng_() % 7 == 0 ? '\n' : ' ';
    }
    return out;
  }

  static std::string png() { return "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="; }

  nlohmann::json chat() const {
    nlohmann::json msgs = {{{"role", "system"}, {"content", system_}}, {{"role", "user"}, {"content", user_}}};
    for (const auto& c : calls_) {
      msgs.push_back({{"role", "assistant"}, {"content", nullptr},
                      {"tool_calls", {{{"id", c.id}, {"type", "function"},
                                       {"function", {{"name", c.tool}, {"arguments", "{\"arg\":\"x\"}"}}}}}}});
      msgs.push_back({{"role", "tool"}, {"tool_call_id", c.id}, {"content", c.output}});
    }
    return {{"model", "gpt-4o"}, {"messages", msgs}, {"stream", false}, {"tools", chat_tools()}};
  }

  nlohmann::json chat_tools() const {
    nlohmann::json tools = nlohmann::json::array();
    for (const auto* n : {"read_file", "run_command", "grep", "list_files"})
      tools.push_back({{"type", "function"}, {"function", {{"name", n}, {"parameters", {{"type", "object"}}}}}});
    return tools;
  }

  nlohmann::json messages() const {
    nlohmann::json msgs = {{{"role", "user"}, {"content", user_}}};
    for (const auto& c : calls_) {
      msgs.push_back({{"role", "assistant"},
                      {"content", {{{"type", "tool_use"}, {"id", c.id}, {"name", c.tool}, {"input", {{"arg", "x"}}}}}}});
      nlohmann::json content = c.output;
      if (c.image)
        content = {{{"type", "text"}, {"text", c.output}},
                   {{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", png()}}}}};
      msgs.push_back({{"role", "user"},
                      {"content", {{{"type", "tool_result"}, {"tool_use_id", c.id}, {"content", content}}}}});
    }
    return {{"model", "claude-sonnet-4-5"}, {"max_tokens", 1024}, {"system", system_}, {"messages", msgs},
            {"tools", {{{"name", "read_file"}, {"input_schema", {{"type", "object"}}}}}}};
  }

  nlohmann::json responses() const {
    nlohmann::json items = {{{"role", "user"}, {"content", user_}}};
    for (const auto& c : calls_) {
      items.push_back({{"type", "function_call"}, {"call_id", c.id}, {"name", c.tool}, {"arguments", "{}"}});
      items.push_back({{"type", "function_call_output"}, {"call_id", c.id}, {"output", c.output}});
    }
    return {{"model", "gpt-4o"}, {"instructions", system_}, {"input", items},
            {"tools", {{{"type", "function"}, {"name", "read_file"}, {"parameters", {{"type", "object"}}}}}}};
  }

  nlohmann::json gemini() const {
    nlohmann::json contents = {{{"role", "user"}, {"parts", {{{"text", user_}}}}}};
    for (const auto& c : calls_) {
      contents.push_back({{"role", "model"}, {"parts", {{{"functionCall", {{"name", c.tool}, {"args", {{"arg", "x"}}}}}}}}});
      contents.push_back({{"role", "user"},
                          {"parts", {{{"functionResponse", {{"name", c.tool}, {"response", {{"result", c.output}}}}}}}}});
    }
    return {{"systemInstruction", {{"parts", {{{"text", system_}}}}}}, {"contents", contents},
            {"tools", {{{"functionDeclarations", {{{"name", "read_file"}}}}}}}};
  }

  nlohmann::json converse() const {
    using nlohmann::json;
    const auto text_block = [](const std::string& t) { return json{{"text", t}}; };
    json msgs = json::array({{{"role", "user"}, {"content", json::array({text_block(user_)})}}});
    for (const auto& c : calls_) {
      json use = {{"toolUseId", c.id}, {"name", c.tool}, {"input", {{"arg", "x"}}}};
      msgs.push_back({{"role", "assistant"}, {"content", json::array({json{{"toolUse", use}}})}});
      json result = {{"toolUseId", c.id}, {"content", json::array({text_block(c.output)})}};
      msgs.push_back({{"role", "user"}, {"content", json::array({json{{"toolResult", result}}})}});
    }
    json spec = {{"name", "read_file"}, {"inputSchema", {{"json", {{"type", "object"}}}}}};
    return {{"system", json::array({text_block(system_)})},
            {"messages", msgs},
            {"toolConfig", {{"tools", json::array({json{{"toolSpec", spec}}})}}}};
  }

  std::string api_;
  std::mt19937 rng_;
  std::size_t counter_ = 0;
  std::string system_ = "You are a coding agent. Use the tools.";
  std::string user_ = "The build fails on CI; find out why.";
  std::vector<call> calls_;
};

}  // namespace gistproxy::testing
