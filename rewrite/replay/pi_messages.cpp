// pi's messages as one API's items (see pi_messages.hpp). Each converter
// follows pi's own provider code where it decides what reaches the wire
// (empty text dropped, tool results joined with "\n", placeholders for
// image-only results), so a rebuilt turn is the size pi really sent.
#include "rewrite/replay/pi_messages.hpp"

#include "rewrite/json/checked.hpp"

namespace gistproxy::rewrite::trace_readers {

namespace {

using checked::string_at;

bool has_type(const ojson& block, const char* type) { return checked::string_is(block, "type", type); }

// pi's content is a string or a list of blocks; anything else reads as empty.
const ojson& blocks_of(const ojson& message) { return checked::array_at(message, "content"); }

bool is_blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

// The texts of a tool result joined as every pi provider joins them.
std::string joined_text(const ojson& blocks) {
  std::string out;
  bool first = true;
  for (const auto& b : blocks)
    if (has_type(b, "text")) {
      if (!first) out += '\n';
      out += string_at(b, "text");
      first = false;
    }
  return out;
}

bool has_image(const ojson& blocks) {
  for (const auto& b : blocks)
    if (has_type(b, "image")) return true;
  return false;
}

// What pi sends for a tool result's text in the APIs that take one string.
std::string result_text(const ojson& blocks) {
  auto text = joined_text(blocks);
  if (!is_blank(text)) return text;
  return has_image(blocks) ? "(see attached image)" : "(no tool output)";
}

std::string data_url(const ojson& image) { return "data:" + string_at(image, "mimeType") + ";base64," + string_at(image, "data"); }

ojson anthropic_image(const ojson& image) {
  return {{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", string_at(image, "mimeType")}, {"data", string_at(image, "data")}}}};
}

// A user message's blocks in the API's shape; texts kept even when blank
// except where pi drops them (Anthropic).
ojson user_parts(pi_api api, const ojson& blocks) {
  ojson out = ojson::array();
  for (const auto& b : blocks) {
    const bool text = has_type(b, "text");
    if (!text && !has_type(b, "image")) continue;
    const auto t = string_at(b, "text");
    switch (api) {
      case pi_api::messages:
        if (text && !is_blank(t)) out.push_back({{"type", "text"}, {"text", t}});
        else if (!text) out.push_back(anthropic_image(b));
        break;
      case pi_api::chat:
        if (text) out.push_back({{"type", "text"}, {"text", t}});
        else out.push_back({{"type", "image_url"}, {"image_url", {{"url", data_url(b)}}}});
        break;
      case pi_api::responses:
        if (text) out.push_back({{"type", "input_text"}, {"text", t}});
        else out.push_back({{"type", "input_image"}, {"detail", "auto"}, {"image_url", data_url(b)}});
        break;
      case pi_api::gemini:
        if (text) out.push_back({{"text", t}});
        else out.push_back({{"inlineData", {{"mimeType", string_at(b, "mimeType")}, {"data", string_at(b, "data")}}}});
        break;
    }
  }
  return out;
}

// Anthropic's tool_result content: one string unless there are images.
ojson anthropic_result_content(const ojson& blocks) {
  if (!has_image(blocks)) return joined_text(blocks);
  ojson out = ojson::array();
  for (const auto& b : blocks)
    if (has_type(b, "text")) out.push_back({{"type", "text"}, {"text", string_at(b, "text")}});
    else if (has_type(b, "image")) out.push_back(anthropic_image(b));
  return out;
}

const ojson& arguments_of(const ojson& call) { return checked::object_at(call, "arguments"); }

// --- assistant messages, one function per API ------------------------------------

ojson anthropic_assistant(const ojson& blocks) {
  ojson out = ojson::array();
  for (const auto& b : blocks) {
    if (has_type(b, "text") && !is_blank(string_at(b, "text"))) {
      out.push_back({{"type", "text"}, {"text", string_at(b, "text")}});
    } else if (has_type(b, "thinking")) {
      const auto signature = string_at(b, "thinkingSignature"), thinking = string_at(b, "thinking");
      if (checked::member(b, "redacted").is_boolean() && b["redacted"].get<bool>())
        out.push_back({{"type", "redacted_thinking"}, {"data", signature}});
      else if (!is_blank(signature))
        out.push_back({{"type", "thinking"}, {"thinking", thinking}, {"signature", signature}});
      else if (!is_blank(thinking))  // unsigned (an aborted stream): pi sends it as text
        out.push_back({{"type", "text"}, {"text", thinking}});
    } else if (has_type(b, "toolCall")) {
      out.push_back({{"type", "tool_use"}, {"id", string_at(b, "id")}, {"name", string_at(b, "name")}, {"input", arguments_of(b)}});
    }
  }
  return out.empty() ? ojson() : ojson{{"role", "assistant"}, {"content", out}};
}

ojson chat_assistant(const ojson& blocks) {
  std::string text;
  ojson calls = ojson::array();
  for (const auto& b : blocks)
    if (has_type(b, "text") && !is_blank(string_at(b, "text"))) text += string_at(b, "text");
    else if (has_type(b, "toolCall"))
      calls.push_back({{"id", string_at(b, "id")}, {"type", "function"},
                       {"function", {{"name", string_at(b, "name")}, {"arguments", dump(arguments_of(b))}}}});
  if (text.empty() && calls.empty()) return ojson();
  ojson m = {{"role", "assistant"}, {"content", text.empty() ? ojson() : ojson(text)}};
  if (!calls.empty()) m["tool_calls"] = std::move(calls);
  return m;
}

// A Responses message item's id: the text signature's (JSON {id, phase} in
// newer pi, the bare id in older), else the one pi makes up.
std::string responses_message_id(const ojson& block, std::size_t index) {
  const auto signature = string_at(block, "textSignature");
  const auto parsed = checked::parse<ojson>(signature);
  if (is_str(parsed, "id")) return parsed["id"];
  if (!signature.empty() && signature.front() != '{') return signature;
  return "msg_pi_" + std::to_string(index);
}

// The stored call id is "<call_id>|<item_id>"; pi sends the parts apart.
std::pair<std::string, std::string> split_call_id(const std::string& id) {
  const auto bar = id.find('|');
  if (bar == std::string::npos) return {id, ""};
  return {id.substr(0, bar), id.substr(bar + 1)};
}

void responses_assistant(const ojson& blocks, std::size_t index, conversation_builder& items) {
  for (const auto& b : blocks) {
    if (has_type(b, "thinking")) {  // the signature is the reasoning item itself, as JSON
      auto item = checked::parse<ojson>(string_at(b, "thinkingSignature"));
      if (item.is_object()) items.add(item);
    } else if (has_type(b, "text")) {
      items.add({{"type", "message"}, {"role", "assistant"},
                 {"content", ojson::array({{{"type", "output_text"}, {"text", string_at(b, "text")}, {"annotations", ojson::array()}}})},
                 {"status", "completed"}, {"id", responses_message_id(b, index)}});
    } else if (has_type(b, "toolCall")) {
      const auto [call_id, item_id] = split_call_id(string_at(b, "id"));
      ojson call = {{"type", "function_call"}};
      if (item_id.rfind("fc_", 0) == 0) call["id"] = item_id;
      call["call_id"] = call_id;
      call["name"] = string_at(b, "name");
      call["arguments"] = dump(arguments_of(b));
      items.add(call);
    }
  }
}

ojson gemini_assistant(const ojson& blocks) {
  ojson parts = ojson::array();
  for (const auto& b : blocks) {
    if (has_type(b, "text") && !is_blank(string_at(b, "text"))) {
      parts.push_back({{"text", string_at(b, "text")}});
    } else if (has_type(b, "thinking") && !is_blank(string_at(b, "thinking"))) {
      ojson part = {{"thought", true}, {"text", string_at(b, "thinking")}};
      if (is_str(b, "thinkingSignature")) part["thoughtSignature"] = b["thinkingSignature"];
      parts.push_back(part);
    } else if (has_type(b, "toolCall")) {
      ojson part = {{"functionCall", {{"name", string_at(b, "name")}, {"args", arguments_of(b)}}}};
      if (is_str(b, "thoughtSignature")) part["thoughtSignature"] = b["thoughtSignature"];
      parts.push_back(part);
    }
  }
  return parts.empty() ? ojson() : ojson{{"role", "model"}, {"parts", parts}};
}

}  // namespace

std::optional<pi_api> pi_api_of(const std::string& api, const std::string& provider) {
  if (api == "anthropic-messages") return pi_api::messages;
  if (api == "openai-completions" || api == "mistral-conversations") return pi_api::chat;
  if (api == "openai-responses" || api == "azure-openai-responses" || api == "openai-codex-responses") return pi_api::responses;
  if (api.rfind("google", 0) == 0) return pi_api::gemini;
  // An api pi added later, or a message without one: its provider's usual API.
  if (provider == "anthropic") return pi_api::messages;
  if (provider == "openai" || provider == "openai-codex" || provider.rfind("azure", 0) == 0) return pi_api::responses;
  if (provider.rfind("google", 0) == 0) return pi_api::gemini;
  return std::nullopt;
}

pi_conversation::pi_conversation(recorded_trace& t, pi_api api)
    : trace_(t), api_(api), items_(t, endpoint_named(api == pi_api::messages ? "messages"
                                                     : api == pi_api::chat   ? "chat"
                                                     : api == pi_api::gemini ? "gemini"
                                                                             : "responses")) {}

void pi_conversation::add(const ojson& message) {
  const auto role = string_at(message, "role");
  if (role == "toolResult") {
    add_tool_result(message);
    return void(++message_count_);
  }
  close_open_calls();
  flush();
  if (role == "user") add_user(checked::member(message, "content"));
  else if (role == "assistant") add_assistant(message);
  ++message_count_;
}

void pi_conversation::request(const std::string& model) {
  close_open_calls();
  flush();
  const auto m = model.empty() ? std::string("unknown") : model;
  switch (api_) {
    case pi_api::messages: items_.request({{"model", m}, {"max_tokens", 32000}}); break;
    case pi_api::chat:
    case pi_api::responses: items_.request({{"model", m}}); break;
    case pi_api::gemini:  // the model is in the path, where pricing finds it
      items_.request(ojson::object());
      trace_.requests.back().target = "/v1beta/models/" + m + ":generateContent";
      break;
  }
}

void pi_conversation::add_user(const ojson& content) {
  if (content.is_string()) {
    const auto& text = content.get_ref<const std::string&>();
    if (api_ == pi_api::messages && is_blank(text)) return;
    if (api_ == pi_api::responses) items_.add({{"role", "user"}, {"content", ojson::array({{{"type", "input_text"}, {"text", text}}})}});
    else if (api_ == pi_api::gemini) items_.add({{"role", "user"}, {"parts", ojson::array({{{"text", text}}})}});
    else items_.add({{"role", "user"}, {"content", text}});
    return;
  }
  auto parts = user_parts(api_, content.is_array() ? content : ojson::array());
  if (parts.empty()) return;
  if (api_ == pi_api::gemini) items_.add({{"role", "user"}, {"parts", parts}});
  else items_.add({{"role", "user"}, {"content", parts}});
}

void pi_conversation::add_assistant(const ojson& message) {
  const auto& blocks = blocks_of(message);
  for (const auto& b : blocks)
    if (has_type(b, "toolCall")) open_calls_.emplace_back(string_at(b, "id"), string_at(b, "name"));
  ojson item;
  switch (api_) {
    case pi_api::messages: item = anthropic_assistant(blocks); break;
    case pi_api::chat: item = chat_assistant(blocks); break;
    case pi_api::gemini: item = gemini_assistant(blocks); break;
    case pi_api::responses: responses_assistant(blocks, message_count_, items_); break;
  }
  if (!item.is_null()) items_.add(item);
}

void pi_conversation::add_tool_result(const ojson& message) {
  const auto id = string_at(message, "toolCallId");
  std::erase_if(open_calls_, [&](const auto& call) { return call.first == id; });
  const auto& blocks = blocks_of(message);
  const bool error = checked::member(message, "isError").is_boolean() && message["isError"].get<bool>();
  switch (api_) {
    case pi_api::messages:
      pending_.push_back({{"type", "tool_result"}, {"tool_use_id", id}, {"content", anthropic_result_content(blocks)}, {"is_error", error}});
      break;
    case pi_api::chat:
      items_.add({{"role", "tool"}, {"content", result_text(blocks)}, {"tool_call_id", id}});
      for (const auto& b : blocks)  // images follow the run of results, as a user message
        if (has_type(b, "image")) pending_.push_back({{"type", "image_url"}, {"image_url", {{"url", data_url(b)}}}});
      break;
    case pi_api::responses:
      items_.add({{"type", "function_call_output"}, {"call_id", split_call_id(id).first}, {"output", result_text(blocks)}});
      break;
    case pi_api::gemini: {
      auto text = joined_text(blocks);
      if (is_blank(text)) text = has_image(blocks) ? "(see attached image)" : "";
      pending_.push_back({{"functionResponse", {{"name", string_at(message, "toolName")}, {"response", {{error ? "error" : "output", text}}}}}});
      break;
    }
  }
}

// pi answers a call left without a result (the user interrupted, the tool
// never returned) before the conversation goes on; the API would refuse it.
void pi_conversation::close_open_calls() {
  auto open = std::move(open_calls_);
  open_calls_.clear();
  for (const auto& [id, name] : open)
    add_tool_result({{"role", "toolResult"}, {"toolCallId", id}, {"toolName", name},
                     {"content", ojson::array({{{"type", "text"}, {"text", "No result provided"}}})}, {"isError", true}});
}

void pi_conversation::flush() {
  if (pending_.empty()) return;
  if (api_ == pi_api::gemini) items_.add({{"role", "user"}, {"parts", pending_}});
  else items_.add({{"role", "user"}, {"content", pending_}});
  pending_ = ojson::array();
}

}  // namespace gistproxy::rewrite::trace_readers
