// Anthropic Messages streams: message_start once, content blocks renumbered
// across hops, read_blob tool_use blocks withheld, client tool_use blocks held
// to the end of the turn, message_delta/message_stop sent once at the end with
// output usage summed (input usage stays that of the first hop's
// message_start, which already reached the client).
#include <map>

#include "rewrite/json/splice.hpp"
#include "rewrite/dialects/messages/messages_stream.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/sse/assemble.hpp"

namespace gistproxy::rewrite {
namespace {

class messages_stream final : public stream_filter {
 public:
  messages_stream(const wire_format& d, std::string tool) : wire_(d), tool_(std::move(tool)) {}

  std::string on_event(const sse::event& e) override {
    if (e.comment_only) return std::string(e.raw);
    auto data = json::parse_checked(e.data);
    if (!data.is_object()) return std::string(e.raw);
    const std::string type = checked::string_at(data, "type", e.name);
    if (type == "message_start") {
      add_numbers(usage_, checked::member(checked::member(data, "message"), "usage"));
      turn_content_ = nlohmann::json::array();
      if (started_) return {};  // one message_start per client stream
      started_ = true;
      message_ = checked::member(data, "message");
      return std::string(e.raw);
    }
    if (type == "content_block_start") {
      auto upstream_index = checked::integer_at(data, "index").value_or(0);
      const auto& block = checked::object_at(data, "content_block");
      auto& b = blocks_[upstream_index];
      b = {};
      b.block = block;
      const bool tool_use = checked::string_is(block, "type", "tool_use");
      b.ours = tool_use && checked::string_is(block, "name", tool_);
      b.held = tool_use && !b.ours;
      if (b.ours || b.held) {
        b.events.push_back(data);
        return {};
      }
      b.client_index = next_index_++;
      data["index"] = b.client_index;
      return sse_event("content_block_start", checked::dump(data));
    }
    if (type == "content_block_delta" || type == "content_block_stop") {
      auto it = blocks_.find(checked::integer_at(data, "index").value_or(0));
      if (it == blocks_.end()) return std::string(e.raw);
      auto& b = it->second;
      accumulate(b, data);
      if (type == "content_block_stop") turn_content_.push_back(final_block(b));
      if (b.ours || b.held) {
        b.events.push_back(data);
        if (type == "content_block_stop" && b.held) held_.push_back(b);
        return {};
      }
      data["index"] = b.client_index;
      return sse_event(type, checked::dump(data));
    }
    if (type == "message_delta") {
      stop_reason_ = checked::member(checked::member(data, "delta"), "stop_reason");
      last_delta_ = data;
      if (auto n = checked::integer_at(checked::member(data, "usage"), "output_tokens")) hop_output_ = *n;
      ended_turn_ = true;
      return {};
    }
    if (type == "message_stop") return {};
    return std::string(e.raw);  // ping, error and unknown events pass through
  }

  hop_end end_hop() override {
    hop_end end;
    end.complete = ended_turn_;
    for (const auto& [index, b] : blocks_)
      if (b.ours) end.calls.push_back({checked::string_at(b.block, "id"), b.input_json.empty() ? "{}" : b.input_json});
    end.response = {{"content", turn_content_}};
    if (__builtin_add_overflow(output_sum_, hop_output_, &output_sum_)) output_sum_ = INT64_MAX;
    hop_output_ = 0;
    blocks_.clear();
    ended_turn_ = false;
    if (!end.calls.empty()) held_.clear();  // the model re-issues its client calls next hop
    return end;
  }

  std::string finish() override {
    std::string out;
    for (auto& b : held_) {  // the client's own tool calls, once, numbered in order
      int index = next_index_++;
      for (auto& ev : b.events) {
        ev["index"] = index;
        out += sse_event(checked::string_at(ev, "type"), checked::dump(ev));
      }
    }
    held_.clear();
    nlohmann::json delta = last_delta_.is_object() ? last_delta_
                                                   : nlohmann::json{{"type", "message_delta"},
                                                                    {"delta", {{"stop_reason", stop_reason_}, {"stop_sequence", nullptr}}}};
    if (!checked::member(delta, "usage").is_object()) delta["usage"] = nlohmann::json::object();
    delta["usage"]["output_tokens"] = output_sum_;  // cumulative over the whole client turn
    // Input and prompt-cache figures summed over the hops (the client saw only
    // the first hop's message_start).
    for (const char* key : {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"})
      if (usage_.is_object() && usage_.contains(key)) delta["usage"][key] = usage_[key];
    out += sse_event("message_delta", checked::dump(delta));
    out += sse_event("message_stop", R"({"type":"message_stop"})");
    return out;
  }

  token_usage usage() const override {
    // Input and cache figures: every hop's message_start, summed. Output: the
    // hops' final message_delta counts, summed.
    token_usage u = wire_.usage_from_fields(usage_fields_of(usage_));
    u.output_tokens = output_sum_;
    return u;
  }

  std::string keepalive() const override { return sse_event("ping", R"({"type": "ping"})"); }

  std::string error_event(std::string_view type, std::string_view message) const override {
    return sse_event("error", checked::dump(nlohmann::json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}));
  }

 private:
  struct block_state {
    nlohmann::json block;
    bool ours = false, held = false;
    int client_index = -1;
    std::string text, thinking, signature, input_json;
    std::vector<nlohmann::json> events;
  };

  static void accumulate(block_state& b, const nlohmann::json& data) {
    const auto& d = checked::member(data, "delta");
    auto kind = checked::string_at(d, "type");
    if (kind == "text_delta") b.text += checked::string_at(d, "text");
    else if (kind == "input_json_delta") b.input_json += checked::string_at(d, "partial_json");
    else if (kind == "thinking_delta") b.thinking += checked::string_at(d, "thinking");
    else if (kind == "signature_delta") b.signature += checked::string_at(d, "signature");
  }

  static nlohmann::json final_block(const block_state& b) {
    auto block = b.block;
    auto kind = checked::string_at(block, "type");
    if (kind == "text") block["text"] = checked::string_at(block, "text") + b.text;
    else if (kind == "thinking") {
      block["thinking"] = checked::string_at(block, "thinking") + b.thinking;
      block["signature"] = checked::string_at(block, "signature") + b.signature;
    } else if (kind == "tool_use") {
      auto input = json::parse_checked(b.input_json.empty() ? "{}" : b.input_json);
      block["input"] = input.is_discarded() ? nlohmann::json::object() : input;
    }
    return block;
  }

  const wire_format& wire_;
  std::string tool_;
  bool started_ = false, ended_turn_ = false;
  nlohmann::json message_, usage_, last_delta_, stop_reason_, turn_content_ = nlohmann::json::array();
  std::map<std::int64_t, block_state> blocks_;
  std::vector<block_state> held_;
  int next_index_ = 0;
  std::int64_t hop_output_ = 0, output_sum_ = 0;
};

}  // namespace

std::unique_ptr<stream_filter> make_messages_stream_filter(const wire_format& messages, std::string tool_name) {
  return std::make_unique<messages_stream>(messages, std::move(tool_name));
}

namespace {

using json = nlohmann::json;

// Anthropic Messages' stream assembled: message_start plus every content
// block's deltas (tool input JSON parsed at its end) plus message_delta.
std::optional<json> assemble_messages_events(const std::vector<std::pair<std::string, json>>& events) {
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
    if (index >= sse::max_index) continue;
    if (type == "content_block_start" && index >= 0) {
      while (std::int64_t(content.size()) <= index) content.push_back(json::object());
      content[std::size_t(index)] = e.value("content_block", json::object());
    } else if (type == "content_block_delta" && index >= 0 && index < std::int64_t(content.size())) {
      auto& block = content[std::size_t(index)];
      const auto& d = e.value("delta", json::object());
      auto dt = d.value("type", "");
      if (dt == "text_delta") sse::append_string(block, "text", d.value("text", json()));
      else if (dt == "thinking_delta") sse::append_string(block, "thinking", d.value("thinking", json()));
      else if (dt == "signature_delta") sse::append_string(block, "signature", d.value("signature", json()));
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

}  // namespace

std::optional<nlohmann::json> assemble_messages_stream(std::string_view sse_text) {
  return sse::assemble_guarded(sse_text, [](const auto& events) { return assemble_messages_events(events); });
}

}  // namespace gistproxy::rewrite
