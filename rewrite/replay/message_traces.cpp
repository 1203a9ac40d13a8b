#include "rewrite/replay/trace_readers.hpp"

namespace gistproxy::rewrite::trace_readers {

namespace {

// A chat message as a provider receives it (frameworks' bookkeeping fields dropped).
ojson chat_message(const ojson& m) {
  ojson out = ojson::object();
  out["role"] = m["role"];
  out["content"] = m.contains("content") ? m["content"] : ojson(nullptr);
  for (const char* k : {"name", "tool_calls", "tool_call_id"})
    if (m.contains(k) && !m[k].is_null()) out[k] = m[k];
  // SWE-agent keeps the ids of the calls a tool message answers in a list.
  if (!out.contains("tool_call_id") && is_arr(m, "tool_call_ids") && !m["tool_call_ids"].empty())
    out["tool_call_id"] = m["tool_call_ids"][0];
  return out;
}

ojson as_blocks(const ojson& content) {
  if (content.is_array()) return content;
  return ojson::array({{{"type", "text"}, {"text", content.is_string() ? content.get<std::string>() : dump(content)}}});
}

}  // namespace

// One request per assistant message: the messages before it.
void rebuild_chat(const ojson& messages, const std::string& model, const ojson& tools, recorded_trace& t) {
  conversation_builder conversation(t, endpoint_named("chat"));
  ojson after = ojson::object();
  if (tools.is_array() && !tools.empty()) after["tools"] = tools;
  for (const auto& m : messages) {
    if (!m.is_object() || !is_str(m, "role")) continue;
    if (m["role"] == "assistant" && conversation.size()) conversation.request({{"model", model}}, after);
    conversation.add(chat_message(m));
  }
}

// Cline / Roo Code / Kilo Code task history (api_conversation_history.json):
// the Anthropic messages of a task, the first user text opening with <task>
// (Cline) or the task itself. Their tool results are user text blocks, found
// only with --text-tool-results cline.
bool is_cline_history(const ojson& list) {
  if (!list.is_array() || list.empty() || !list[0].is_object() || list[0].value("role", "") != "user") return false;
  const auto& content = list[0].contains("content") ? list[0]["content"] : ojson();
  if (!content.is_array() || content.empty() || !content[0].is_object() || !is_str(content[0], "text")) return false;
  const auto text = content[0]["text"].get<std::string>();
  return text.rfind("<task>", 0) == 0 || text.rfind("<feedback>", 0) == 0;
}

void read_cline_history(const ojson& list, recorded_trace& t) {
  t.format = "cline";
  conversation_builder conversation(t, endpoint_named("messages"));
  for (const auto& m : list) {
    if (!m.is_object() || !is_str(m, "role")) continue;
    if (m["role"] == "assistant" && conversation.size())
      conversation.request({{"model", "unknown"}, {"max_tokens", 8192}});
    conversation.add({{"role", m["role"]}, {"content", m.contains("content") ? m["content"] : ojson("")}});
  }
}

namespace {

// One request per model turn: the contents before it.
void rebuild_gemini(const ojson& contents, recorded_trace& t) {
  conversation_builder conversation(t, endpoint_named("gemini"));
  for (const auto& c : contents) {
    if (!c.is_object() || !is_arr(c, "parts")) continue;
    if (c.value("role", "") == "model" && conversation.size()) conversation.request(ojson::object());
    conversation.add({{"role", c.value("role", "user")}, {"parts", c["parts"]}});
  }
}

}  // namespace

// Gemini CLI saved chats. `/chat save TAG` writes the API's own contents
// (checkpoint-TAG.json: [{role, parts}]); sessions (~/.gemini/tmp/*/chats/
// session-*.json) keep {messages: [{type: user|gemini, content, toolCalls:
// [{id, name, args, result: [parts]}]}]}, turned back into contents here.
bool is_gemini_contents(const ojson& list) {
  return list.is_array() && !list.empty() && list[0].is_object() && is_str(list[0], "role") && is_arr(list[0], "parts");
}

bool is_gemini_cli_session(const ojson& j) {
  return is_arr(j, "messages") && (j.contains("sessionId") || j.contains("projectHash")) && !j.contains("model");
}

void read_gemini_cli(const ojson& j, recorded_trace& t) {
  t.format = "gemini-cli";
  if (j.is_array()) return rebuild_gemini(j, t);
  ojson contents = ojson::array();
  for (const auto& m : j["messages"]) {
    if (!m.is_object()) continue;
    const auto type = m.value("type", "");
    ojson text_parts = ojson::array();
    if (is_str(m, "content") && !m["content"].get<std::string>().empty()) text_parts.push_back({{"text", m["content"]}});
    else if (m.contains("content") && m["content"].is_array()) text_parts = m["content"];
    if (type == "user") {
      contents.push_back({{"role", "user"}, {"parts", text_parts}});
      continue;
    }
    if (type != "gemini") continue;
    ojson calls = text_parts, results = ojson::array();
    for (const auto& call : is_arr(m, "toolCalls") ? m["toolCalls"] : ojson::array()) {
      if (!call.is_object()) continue;
      calls.push_back({{"functionCall", {{"id", call.value("id", "")}, {"name", call.value("name", "")},
                                         {"args", call.contains("args") ? call["args"] : ojson::object()}}}});
      for (const auto& part : is_arr(call, "result") ? call["result"] : ojson::array()) results.push_back(part);
    }
    contents.push_back({{"role", "model"}, {"parts", calls}});
    if (!results.empty()) contents.push_back({{"role", "user"}, {"parts", results}});
  }
  rebuild_gemini(contents, t);
}

// Claude Code keeps one content block per line; lines of one assistant message
// share message.id, and consecutive user lines reach the API as one message.
void read_claude_code(const std::vector<ojson>& lines, recorded_trace& t) {
  t.format = "claude-code";
  struct msg {
    std::string role, id, model;
    ojson content;
  };
  std::vector<msg> messages;
  for (const auto& line : lines) {
    auto type = line.value("type", "");
    if ((type != "user" && type != "assistant") || !is_obj(line, "message")) continue;
    const auto& m = line["message"];
    auto role = m.value("role", type);
    auto id = m.value("id", "");
    if (!messages.empty() && messages.back().role == role && (role == "user" || messages.back().id == id)) {
      auto& last = messages.back();
      last.content = as_blocks(last.content);
      for (const auto& b : as_blocks(m.value("content", ojson(""))))
        last.content.push_back(b);
      continue;
    }
    messages.push_back({role, id, m.value("model", ""), m.value("content", ojson(""))});
  }
  conversation_builder conversation(t, endpoint_named("messages"));
  for (std::size_t k = 0; k < messages.size(); ++k) {
    if (k > 0 && messages[k].role == "assistant")
      conversation.request({{"model", messages[k].model.empty() ? "unknown" : messages[k].model}, {"max_tokens", 32000}});
    conversation.add({{"role", messages[k].role}, {"content", messages[k].content}});
  }
}

}  // namespace gistproxy::rewrite::trace_readers
