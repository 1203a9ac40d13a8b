// Chat Completions streams: `data:` chunks with one id across hops, read_blob
// tool_call fragments removed, client tool calls held to the end of the turn
// (then sent once, indices from 0), one finish_reason chunk and one usage
// chunk (summed) at the end, then [DONE].
#include <map>

#include "rewrite/json/splice.hpp"
#include "rewrite/dialects/chat/chat_stream.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/sse/assemble.hpp"

namespace gistproxy::rewrite {
namespace {

std::string data_line(const nlohmann::json& j) { return "data: " + checked::dump(j) + "\n\n"; }

class chat_stream final : public stream_filter {
 public:
  chat_stream(const wire_format& d, std::string tool) : wire_(d), tool_(std::move(tool)) {}

  std::string on_event(const sse::event& e) override {
    if (e.comment_only) return std::string(e.raw);
    if (e.data == "[DONE]") return {};
    auto chunk = json::parse_checked(e.data);
    if (!chunk.is_object() || chunk.contains("error")) return std::string(e.raw);
    if (id_.is_null()) {
      id_ = checked::member(chunk, "id");
      created_ = checked::member(chunk, "created");
      template_ = chunk;
    }
    bool changed = hop_ > 0;  // later hops keep the first hop's id and created
    if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) {
      add_numbers(usage_, *u);
      saw_usage_ = true;
    }
    if (!checked::member(chunk, "choices").is_array() || chunk["choices"].empty())
      return {};  // the usage chunk: sent once, at the end
    auto& choice = chunk["choices"][0];
    if (!choice.is_object()) return std::string(e.raw);  // not a shape we know: passed on as sent
    if (!checked::member(choice, "finish_reason").is_null()) {
      finish_reason_ = choice["finish_reason"];
      hop_finished_ = true;
      choice["finish_reason"] = nullptr;
      changed = true;
    }
    nlohmann::json no_delta;
    auto& delta = choice.contains("delta") ? choice["delta"] : no_delta;
    if (delta.is_object() && delta.contains("content") && delta["content"].is_string())
      text_ += delta["content"].get<std::string>();
    if (delta.is_object() && delta.contains("tool_calls") && delta["tool_calls"].is_array()) {
      for (const auto& frag : delta["tool_calls"]) {
        auto& call = calls_[checked::integer_at(frag, "index").value_or(0)];
        if (checked::member(frag, "id").is_string()) call.id = frag["id"];
        const auto& fn = checked::object_at(frag, "function");
        call.name += checked::string_at(fn, "name");
        call.arguments += checked::string_at(fn, "arguments");
      }
      delta.erase("tool_calls");  // all tool calls wait for the end of the turn
      changed = true;
    }
    if (!changed) return std::string(e.raw);
    bool empty_delta = !delta.is_object() || delta.empty() ||
                       (delta.size() == 1 && delta.contains("content") && delta["content"].is_null());
    if (empty_delta && checked::member(choice, "logprobs").is_null()) return {};
    chunk["id"] = id_;
    chunk["created"] = created_;
    return data_line(chunk);
  }

  hop_end end_hop() override {
    hop_end end;
    end.complete = hop_finished_;
    hop_finished_ = false;
    nlohmann::json tool_calls = nlohmann::json::array();
    held_.clear();
    for (const auto& [index, c] : calls_) {
      tool_calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
      if (c.name == tool_) end.calls.push_back({c.id, c.arguments.empty() ? "{}" : c.arguments});
      else held_.push_back(c);
    }
    nlohmann::json message = {{"role", "assistant"}, {"content", text_.empty() ? nlohmann::json() : nlohmann::json(text_)}};
    if (!tool_calls.empty()) message["tool_calls"] = tool_calls;
    end.response = {{"choices", {{{"index", 0}, {"message", message}}}}};
    if (!end.calls.empty()) held_.clear();  // the model re-issues its client calls next hop
    calls_.clear();
    text_.clear();
    ++hop_;
    return end;
  }

  std::string finish() override {
    std::string out;
    auto base = template_;
    base["id"] = id_;
    base["created"] = created_;
    if (!held_.empty()) {
      nlohmann::json frags = nlohmann::json::array();
      for (std::size_t i = 0; i < held_.size(); ++i)
        frags.push_back({{"index", i}, {"id", held_[i].id}, {"type", "function"},
                         {"function", {{"name", held_[i].name}, {"arguments", held_[i].arguments}}}});
      auto chunk = base;
      chunk["choices"] = {{{"index", 0}, {"delta", {{"tool_calls", frags}}}, {"finish_reason", nullptr}}};
      if (chunk.contains("usage")) chunk["usage"] = nullptr;
      out += data_line(chunk);
    }
    auto last = base;
    last["choices"] = {{{"index", 0}, {"delta", nlohmann::json::object()}, {"finish_reason", finish_reason_.is_null() ? nlohmann::json("stop") : finish_reason_}}};
    if (last.contains("usage")) last["usage"] = nullptr;
    out += data_line(last);
    if (saw_usage_) {  // only when the client asked for include_usage
      auto usage = base;
      usage["choices"] = nlohmann::json::array();
      usage["usage"] = usage_;
      out += data_line(usage);
    }
    out += "data: [DONE]\n\n";
    return out;
  }

  token_usage usage() const override {
    return saw_usage_ ? wire_.usage_from_fields(usage_fields_of(usage_)) : token_usage{};
  }

  std::string keepalive() const override { return ": keepalive\n\n"; }

  std::string error_event(std::string_view type, std::string_view message) const override {
    return data_line({{"error", {{"message", message}, {"type", type}, {"code", nullptr}}}});
  }

 private:
  struct pending_call {
    std::string id, name, arguments;
  };
  const wire_format& wire_;
  std::string tool_;
  int hop_ = 0;
  nlohmann::json id_, created_, template_, usage_, finish_reason_;
  bool saw_usage_ = false;
  bool hop_finished_ = false;  // this hop's finish_reason chunk arrived
  std::map<std::int64_t, pending_call> calls_;
  std::vector<pending_call> held_;
  std::string text_;
};

}  // namespace

std::unique_ptr<stream_filter> make_chat_stream_filter(const wire_format& chat, std::string tool_name) {
  return std::make_unique<chat_stream>(chat, std::move(tool_name));
}

namespace {

using json = nlohmann::json;

// Chat Completions' stream assembled: chunks merged (content, refusal, tool
// call arguments by index, last usage).
std::optional<json> assemble_chat_events(const std::vector<std::pair<std::string, json>>& events) {
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
      sse::append_string(msg, "content", d.value("content", json()));
      sse::append_string(msg, "refusal", d.value("refusal", json()));
      for (const auto& tc : d.value("tool_calls", json::array())) {
        auto ti = checked::integer_at(tc, "index").value_or(0);
        if (ti < 0 || ti >= sse::max_index) continue;
        if (!msg.contains("tool_calls")) msg["tool_calls"] = json::array();
        auto& calls = msg["tool_calls"];
        while (std::int64_t(calls.size()) <= ti)
          calls.push_back({{"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}});
        auto& call = calls[std::size_t(ti)];
        if (tc.contains("id") && tc["id"].is_string()) call["id"] = tc["id"];
        if (tc.contains("type") && tc["type"].is_string()) call["type"] = tc["type"];
        const auto& f = tc.value("function", json::object());
        sse::append_string(call["function"], "name", f.value("name", json()));
        sse::append_string(call["function"], "arguments", f.value("arguments", json()));
      }
      if (c.contains("finish_reason") && !c["finish_reason"].is_null()) choice["finish_reason"] = c["finish_reason"];
    }
  }
  if (out.is_null()) return std::nullopt;
  out["choices"] = json::array();
  for (auto& [_, c] : choices) out["choices"].push_back(std::move(c));
  return out;
}

}  // namespace

std::optional<nlohmann::json> assemble_chat_stream(std::string_view sse_text) {
  return sse::assemble_guarded(sse_text, [](const auto& events) { return assemble_chat_events(events); });
}

}  // namespace gistproxy::rewrite
