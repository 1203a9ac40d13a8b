// ConverseStream hops spliced: messageStart once, content blocks renumbered
// across hops, read_blob toolUse blocks withheld, the client's toolUse blocks
// held to the end of the turn, messageStop and metadata sent once at the end
// with usage (and latency) summed over the hops. Events are keyed by their
// name (the event-stream :event-type); their data never says its type.
//
// Text and reasoning blocks have no contentBlockStart: a block's first event
// may be its first delta. Every payload may carry a "p" padding member,
// which is kept as it came.
#include "rewrite/dialects/bedrock/converse_stream.hpp"

#include <map>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/splice.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/sse/assemble.hpp"

namespace gistproxy::rewrite {
namespace {

using njson = nlohmann::json;

std::int64_t block_index(const njson& data) { return checked::integer_at(data, "contentBlockIndex").value_or(0); }

// One content block as its events build it.
struct block_parts {
  njson start;  // contentBlockStart's "start" ({"toolUse":{toolUseId, name}}); null for text
  std::string text, input_json, reasoning, signature, redacted;
  bool reasoning_seen = false;

  bool tool_use() const { return checked::member(start, "toolUse").is_object(); }

  void add(const njson& delta) {
    if (const auto& t = checked::member(delta, "text"); t.is_string()) text += t.get_ref<const std::string&>();
    input_json += checked::string_at(checked::object_at(delta, "toolUse"), "input");
    if (const auto& r = checked::member(delta, "reasoningContent"); r.is_object()) {
      reasoning_seen = true;
      reasoning += checked::string_at(r, "text");
      signature += checked::string_at(r, "signature");
      redacted += checked::string_at(r, "redactedContent");
    }
  }

  // The block as a Converse answer holds it.
  njson as_answer() const {
    if (tool_use()) {
      njson call = checked::object_at(start, "toolUse");
      auto input = json::parse_checked(input_json.empty() ? "{}" : input_json);
      call["input"] = input.is_object() ? input : njson::object();
      return {{"toolUse", std::move(call)}};
    }
    if (reasoning_seen && !redacted.empty()) return {{"reasoningContent", {{"redactedContent", redacted}}}};
    if (reasoning_seen) {
      njson r = {{"text", reasoning}};
      if (!signature.empty()) r["signature"] = signature;
      return {{"reasoningContent", {{"reasoningText", std::move(r)}}}};
    }
    return {{"text", text}};
  }
};

class converse_stream final : public stream_filter {
 public:
  converse_stream(const wire_format& d, std::string tool) : wire_(d), tool_(std::move(tool)) {}

  std::string on_event(const sse::event& e) override {
    if (e.comment_only) return std::string(e.raw);
    auto data = json::parse_checked(e.data);
    if (!data.is_object()) return std::string(e.raw);
    if (e.name == "messageStart") {
      if (started_) return {};  // one messageStart per client stream
      started_ = true;
      return std::string(e.raw);
    }
    if (e.name == "contentBlockStart") return on_start(std::move(data));
    if (e.name == "contentBlockDelta" || e.name == "contentBlockStop") return on_block_event(std::string(e.name), std::move(data));
    if (e.name == "messageStop") {
      stop_ = std::move(data);
      ended_turn_ = true;
      return {};
    }
    if (e.name == "metadata") {
      add_numbers(usage_sum_, checked::member(data, "usage"));
      add_numbers(metrics_sum_, checked::member(data, "metrics"));
      metadata_ = std::move(data);
      return {};
    }
    return std::string(e.raw);  // exceptions and unknown events pass through
  }

  hop_end end_hop() override {
    hop_end end;
    end.complete = ended_turn_;
    njson content = njson::array();
    for (const auto& [index, b] : blocks_) {
      if (b.ours)
        end.calls.push_back({checked::string_at(checked::object_at(b.parts.start, "toolUse"), "toolUseId"),
                             b.parts.input_json.empty() ? "{}" : b.parts.input_json});
      content.push_back(b.parts.as_answer());
    }
    end.response = {{"output", {{"message", {{"role", "assistant"}, {"content", std::move(content)}}}}},
                    {"stopReason", checked::member(stop_, "stopReason")}};
    blocks_.clear();
    ended_turn_ = false;
    if (!end.calls.empty()) held_.clear();  // the model re-issues its client calls next hop
    return end;
  }

  std::string finish() override {
    std::string out;
    const bool client_calls = !held_.empty();
    for (auto& b : held_) {  // the client's own tool calls, once, numbered in order
      const int index = next_index_++;
      for (auto& [name, ev] : b.events) {
        ev["contentBlockIndex"] = index;
        out += sse_event(name, checked::dump(ev));
      }
    }
    held_.clear();
    njson stop = stop_.is_object() ? stop_ : njson{{"stopReason", "end_turn"}};
    // A tool_use turn whose only calls were read_blob's (withheld) ends as an answer.
    if (!client_calls && checked::string_is(stop, "stopReason", "tool_use")) stop["stopReason"] = "end_turn";
    out += sse_event("messageStop", checked::dump(stop));
    if (metadata_.is_object()) {
      njson meta = metadata_;
      if (usage_sum_.is_object()) meta["usage"] = usage_sum_;
      if (metrics_sum_.is_object()) meta["metrics"] = metrics_sum_;
      out += sse_event("metadata", checked::dump(meta));
    }
    return out;
  }

  token_usage usage() const override { return wire_.usage_from_fields(usage_fields_of(usage_sum_)); }

  // An event-stream has no comment or ping message, and an event type the
  // SDKs do not know is not something to send them: no keep-alive.
  std::string keepalive() const override { return {}; }

  // What ConverseStream itself sends when it fails inside the service: an
  // internalServerException ({"message": …}), which every SDK raises as a
  // retryable error. `type` has no place in that shape.
  std::string error_event(std::string_view, std::string_view message) const override {
    return sse_event("internalServerException", checked::dump(njson{{"message", message}}));
  }

 private:
  struct block_state {
    block_parts parts;
    bool ours = false, held = false;
    int client_index = -1;
    std::vector<std::pair<std::string, njson>> events;  // of held and read_blob blocks
  };

  std::string on_start(njson data) {
    auto& b = blocks_[block_index(data)];
    b = {};
    b.parts.start = checked::object_at(data, "start");
    const bool tool_use = b.parts.tool_use();
    b.ours = tool_use && checked::string_is(checked::object_at(b.parts.start, "toolUse"), "name", tool_);
    b.held = tool_use && !b.ours;
    if (b.ours || b.held) {
      b.events.emplace_back("contentBlockStart", std::move(data));
      return {};
    }
    b.client_index = next_index_++;
    data["contentBlockIndex"] = b.client_index;
    return sse_event("contentBlockStart", checked::dump(data));
  }

  std::string on_block_event(std::string name, njson data) {
    auto [it, added] = blocks_.try_emplace(block_index(data));
    auto& b = it->second;
    if (added) b.client_index = next_index_++;  // text and reasoning start with their first delta
    if (name == "contentBlockDelta") b.parts.add(checked::member(data, "delta"));
    if (b.ours || b.held) {
      const bool stop = name == "contentBlockStop";
      b.events.emplace_back(std::move(name), std::move(data));
      if (stop && b.held) held_.push_back(b);
      return {};
    }
    data["contentBlockIndex"] = b.client_index;
    return sse_event(name, checked::dump(data));
  }

  const wire_format& wire_;
  std::string tool_;
  bool started_ = false, ended_turn_ = false;
  std::map<std::int64_t, block_state> blocks_;  // this hop's, by the upstream's index
  std::vector<block_state> held_;
  int next_index_ = 0;
  njson stop_;                               // the last hop's messageStop
  njson metadata_;                           // the last hop's metadata
  njson usage_sum_, metrics_sum_;            // over every hop's metadata
};

// ConverseStream events assembled into the answer Converse returns.
std::optional<njson> assemble_converse_events(const std::vector<std::pair<std::string, njson>>& events) {
  bool any = false;
  njson out = njson::object();
  std::string role = "assistant";
  std::map<std::int64_t, block_parts> blocks;
  for (const auto& [name, e] : events) {
    if (name.ends_with("Exception")) {  // the stream's error, as Converse's error answers name it
      njson error = e;
      error["__type"] = name;
      return error;
    }
    if (name == "messageStart") {
      role = checked::string_at(e, "role", role);
    } else if (name == "contentBlockStart" || name == "contentBlockDelta" || name == "contentBlockStop") {
      const auto index = block_index(e);
      if (index < 0 || index >= sse::max_index) continue;
      if (name == "contentBlockStart") blocks[index].start = checked::object_at(e, "start");
      if (name == "contentBlockDelta") blocks[index].add(checked::member(e, "delta"));
    } else if (name == "messageStop") {
      for (const char* key : {"stopReason", "additionalModelResponseFields"})
        if (e.contains(key)) out[key] = e[key];
    } else if (name == "metadata") {
      for (const char* key : {"usage", "metrics", "trace", "performanceConfig"})
        if (e.contains(key)) out[key] = e[key];
    } else {
      continue;
    }
    any = true;
  }
  if (!any) return std::nullopt;
  njson content = njson::array();
  for (const auto& [index, b] : blocks) content.push_back(b.as_answer());
  out["output"] = {{"message", {{"role", role}, {"content", std::move(content)}}}};
  return out;
}

}  // namespace

std::unique_ptr<stream_filter> make_converse_stream_filter(const wire_format& converse, std::string tool_name) {
  return std::make_unique<converse_stream>(converse, std::move(tool_name));
}

std::optional<nlohmann::json> assemble_converse_stream(std::string_view sse_text) {
  return sse::assemble_guarded(sse_text, assemble_converse_events);
}

}  // namespace gistproxy::rewrite
