#include "rewrite/sse/assemble.hpp"

#include <map>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/sse/event_parser.hpp"

namespace gistproxy::rewrite {
namespace {

using nlohmann::json;

// Indices come from the upstream: a block or call index past this is not
// assembled (a hostile index must not make us allocate millions of slots).
constexpr std::int64_t max_index = 4096;

}  // namespace

std::vector<std::pair<std::string, nlohmann::json>> sse::parsed_events(std::string_view text) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  sse::event_parser parser;
  auto on_event = [&](const sse::event& e) {
    if (e.comment_only || e.data.empty() || e.data == "[DONE]") return;
    auto j = rewrite::json::parse_checked(e.data);
    if (!j.is_discarded() && j.is_object()) out.emplace_back(std::string(e.name), std::move(j));
  };
  parser.feed(text, on_event);
  parser.feed("\n\n", on_event);  // a last event without its blank line
  return out;
}

namespace {

void append_string(json& obj, const char* key, const json& piece) {
  if (!piece.is_string()) return;
  if (!obj.contains(key) || !obj[key].is_string()) obj[key] = "";
  obj[key] = obj[key].get<std::string>() + piece.get<std::string>();
}

std::optional<json> assemble_chat(const std::vector<std::pair<std::string, json>>& events) {
  json out;
  std::map<std::int64_t, json> choices;
  for (const auto& [name, chunk] : events) {
    if (chunk.contains("error")) return chunk;
    if (chunk.value("object", "") != "chat.completion.chunk") continue;
    if (out.is_null()) {
      out = {{"id", chunk.value("id", "")}, {"object", "chat.completion"}, {"created", chunk.value("created", 0)},
             {"model", chunk.value("model", "")}};
      if (chunk.contains("system_fingerprint")) out["system_fingerprint"] = chunk["system_fingerprint"];
    }
    if (chunk.contains("usage") && !chunk["usage"].is_null()) out["usage"] = chunk["usage"];
    for (const auto& c : chunk.value("choices", json::array())) {
      auto index = c.value("index", std::int64_t(0));
      auto& choice = choices[index];
      if (choice.is_null())
        choice = {{"index", index}, {"message", {{"role", "assistant"}, {"content", nullptr}}}, {"finish_reason", nullptr}};
      const auto& d = c.value("delta", json::object());
      auto& msg = choice["message"];
      if (d.contains("role") && d["role"].is_string()) msg["role"] = d["role"];
      append_string(msg, "content", d.value("content", json()));
      append_string(msg, "refusal", d.value("refusal", json()));
      for (const auto& tc : d.value("tool_calls", json::array())) {
        auto ti = checked::integer_at(tc, "index").value_or(0);
        if (ti < 0 || ti >= max_index) continue;
        if (!msg.contains("tool_calls")) msg["tool_calls"] = json::array();
        auto& calls = msg["tool_calls"];
        while (std::int64_t(calls.size()) <= ti)
          calls.push_back({{"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}});
        auto& call = calls[std::size_t(ti)];
        if (tc.contains("id") && tc["id"].is_string()) call["id"] = tc["id"];
        if (tc.contains("type") && tc["type"].is_string()) call["type"] = tc["type"];
        const auto& f = tc.value("function", json::object());
        append_string(call["function"], "name", f.value("name", json()));
        append_string(call["function"], "arguments", f.value("arguments", json()));
      }
      if (c.contains("finish_reason") && !c["finish_reason"].is_null()) choice["finish_reason"] = c["finish_reason"];
    }
  }
  if (out.is_null()) return std::nullopt;
  out["choices"] = json::array();
  for (auto& [_, c] : choices) out["choices"].push_back(std::move(c));
  return out;
}

std::optional<json> assemble_messages(const std::vector<std::pair<std::string, json>>& events) {
  json message;
  std::map<std::int64_t, std::string> partial_json;  // tool input as streamed
  for (const auto& [name, e] : events) {
    auto type = e.value("type", "");
    if (type == "error") return e;
    if (type == "message_start" && e.contains("message")) {
      message = e["message"];
      if (!message.contains("content") || !message["content"].is_array()) message["content"] = json::array();
      continue;
    }
    if (message.is_null()) continue;
    auto& content = message["content"];
    auto index = checked::integer_at(e, "index").value_or(-1);
    if (index >= max_index) continue;
    if (type == "content_block_start" && index >= 0) {
      while (std::int64_t(content.size()) <= index) content.push_back(json::object());
      content[std::size_t(index)] = e.value("content_block", json::object());
    } else if (type == "content_block_delta" && index >= 0 && index < std::int64_t(content.size())) {
      auto& block = content[std::size_t(index)];
      const auto& d = e.value("delta", json::object());
      auto dt = d.value("type", "");
      if (dt == "text_delta") append_string(block, "text", d.value("text", json()));
      else if (dt == "thinking_delta") append_string(block, "thinking", d.value("thinking", json()));
      else if (dt == "signature_delta") append_string(block, "signature", d.value("signature", json()));
      else if (dt == "input_json_delta") partial_json[index] += d.value("partial_json", "");
      else if (dt == "citations_delta" && d.contains("citation")) {
        if (!block.contains("citations") || !block["citations"].is_array()) block["citations"] = json::array();
        block["citations"].push_back(d["citation"]);
      }
    } else if (type == "content_block_stop" && partial_json.count(index) && index < std::int64_t(content.size())) {
      auto input = rewrite::json::parse_checked(partial_json[index]);
      content[std::size_t(index)]["input"] = input.is_discarded() ? json(partial_json[index]) : input;
    } else if (type == "message_delta") {
      const auto delta = e.value("delta", json::object());  // items() must not outlive it
      for (const auto& [k, v] : delta.items()) message[k] = v;
      if (e.contains("usage") && e["usage"].is_object()) {
        if (!message.contains("usage") || !message["usage"].is_object()) message["usage"] = json::object();
        for (const auto& [k, v] : e["usage"].items()) message["usage"][k] = v;
      }
    }
  }
  if (message.is_null()) return std::nullopt;
  return message;
}

std::optional<json> assemble_responses(const std::vector<std::pair<std::string, json>>& events) {
  std::optional<json> last;
  for (const auto& [name, e] : events) {
    auto type = e.value("type", "");
    if (type == "error") return e;
    if (type.rfind("response.", 0) == 0 && e.contains("response") && e["response"].is_object()) last = e["response"];
  }
  return last;  // the terminal event (completed, incomplete, failed) carries the whole response
}

}  // namespace

bool looks_like_sse(std::string_view body) {
  auto start = body.find_first_not_of("\r\n");
  if (start == std::string_view::npos) return false;
  body.remove_prefix(start);
  return body.starts_with("data:") || body.starts_with("event:") || body.starts_with(":") || body.starts_with("id:");
}

namespace sse {
std::optional<nlohmann::json> assemble_guarded(
    std::string_view sse_text,
    const std::function<std::optional<nlohmann::json>(const std::vector<std::pair<std::string, nlohmann::json>>&)>& assemble) {
  try {
    return assemble(parsed_events(sse_text));
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

std::optional<nlohmann::json> assemble_chat_stream(std::string_view sse_text) {
  return assemble_guarded(sse_text, [](const auto& events) { return assemble_chat(events); });
}
std::optional<nlohmann::json> assemble_messages_stream(std::string_view sse_text) {
  return assemble_guarded(sse_text, [](const auto& events) { return assemble_messages(events); });
}
std::optional<nlohmann::json> assemble_responses_stream(std::string_view sse_text) {
  return assemble_guarded(sse_text, [](const auto& events) { return assemble_responses(events); });
}
}  // namespace sse

}  // namespace gistproxy::rewrite
