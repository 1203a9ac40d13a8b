#include "rewrite/dialects/gemini/gemini_stream.hpp"

#include "rewrite/json/splice.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/sse/assemble.hpp"

namespace gistproxy::rewrite {
namespace {

using nlohmann::json;

const json& first_candidate(const json& event) { return checked::element(checked::array_at(event, "candidates"), 0); }

bool is_call(const json& part) { return checked::member(part, "functionCall").is_object(); }

class gemini_stream final : public stream_filter {
 public:
  gemini_stream(const wire_format& d, std::string tool) : wire_(d), tool_(std::move(tool)) {}

  std::string on_event(const sse::event& e) override {
    if (e.comment_only || e.data.empty()) return std::string(e.raw);
    auto event = rewrite::json::parse_checked(e.data);
    if (!event.is_object() || event.contains("error")) return std::string(e.raw);
    if (hop_ended_) start_hop();
    if (const auto& u = checked::member(event, "usageMetadata"); u.is_object()) hop_usage_ = u;
    const auto& candidate = first_candidate(event);
    if (!candidate.is_object()) return std::string(e.raw);

    json forwarded_parts = json::array();
    bool changed = false;
    for (const auto& part : checked::array_at(checked::object_at(candidate, "content"), "parts")) {
      hop_parts_.push_back(part);
      if (!is_call(part)) {
        forwarded_parts.push_back(part);
      } else {
        changed = true;
        // read_blob calls never reach the client; its own calls wait for the end of the turn.
        if (!checked::string_is(checked::object_at(part, "functionCall"), "name", tool_)) held_calls_.push_back(part);
      }
    }
    if (candidate.contains("finishReason")) {
      // The end of the turn: withheld until the final hop.
      changed = true;
      end_event_ = event;
      finish_reason_ = checked::member(candidate, "finishReason");
    }
    if (!changed) return std::string(e.raw);
    if (forwarded_parts.empty()) return {};
    json out = event;
    auto& c = out["candidates"][0];
    c["content"]["parts"] = std::move(forwarded_parts);
    c.erase("finishReason");
    out.erase("usageMetadata");
    return data_event(out);
  }

  hop_end end_hop() override {
    hop_ended_ = true;
    hop_end end;
    end.complete = !finish_reason_.is_null();
    json response = {{"candidates", json::array({{{"content", {{"role", "model"}, {"parts", hop_parts_}}},
                                                  {"finishReason", finish_reason_}}})}};
    if (!hop_usage_.is_null()) response["usageMetadata"] = hop_usage_;
    end.calls = wire_.find_blob_calls(response, tool_).blob_calls;
    end.response = std::move(response);
    add_numbers(usage_sum_, hop_usage_);
    return end;
  }

  std::string finish() override {
    if (end_event_.is_null()) return {};
    json out = std::move(end_event_);
    end_event_ = nullptr;
    auto& c = out["candidates"][0];
    c["content"] = {{"role", "model"}, {"parts", held_calls_}};
    if (!usage_sum_.is_null()) out["usageMetadata"] = usage_sum_;
    return data_event(out);
  }

  token_usage usage() const override {
    return wire_.usage_from_fields(usage_fields_of(usage_sum_));
  }

  std::string keepalive() const override { return {}; }

  std::string error_event(std::string_view type, std::string_view message) const override {
    return data_event({{"error", {{"code", 502}, {"message", message}, {"status", type}}}});
  }

 private:
  static std::string data_event(const json& j) { return "data: " + checked::dump(j) + "\r\n\r\n"; }

  void start_hop() {
    hop_ended_ = false;
    hop_parts_ = json::array();
    held_calls_ = json::array();
    hop_usage_ = nullptr;
    finish_reason_ = nullptr;
  }

  const wire_format& wire_;
  std::string tool_;
  bool hop_ended_ = false;
  json hop_parts_ = json::array();   // every part of this hop's turn, in order
  json held_calls_ = json::array();  // the client's calls of this hop's turn
  json hop_usage_;                   // the hop's last usageMetadata (cumulative within a hop)
  json finish_reason_;
  json end_event_;                   // the last hop's end of turn, withheld
  json usage_sum_;                   // over ended hops
};

std::optional<json> assemble(const std::vector<std::pair<std::string, json>>& events) {
  json parts = json::array();
  json out = json::object();
  bool any = false;
  for (const auto& [name, event] : events) {
    const auto& candidate = first_candidate(event);
    if (!candidate.is_object()) continue;
    any = true;
    for (const auto& part : checked::array_at(checked::object_at(candidate, "content"), "parts")) {
      const bool text = checked::member(part, "text").is_string() && part.size() == 1;
      if (text && !parts.empty() && checked::member(parts.back(), "text").is_string() && parts.back().size() == 1)
        parts.back()["text"] = parts.back()["text"].get<std::string>() + part["text"].get<std::string>();
      else
        parts.push_back(part);
    }
    if (candidate.contains("finishReason")) out["finishReason"] = candidate["finishReason"];
    for (const char* key : {"usageMetadata", "modelVersion", "responseId"})
      if (event.contains(key)) out[key] = event[key];
  }
  if (!any) return std::nullopt;
  json candidate = {{"content", {{"role", "model"}, {"parts", std::move(parts)}}}, {"index", 0}};
  if (out.contains("finishReason")) candidate["finishReason"] = out["finishReason"];
  json response = {{"candidates", json::array({std::move(candidate)})}};
  for (const char* key : {"usageMetadata", "modelVersion", "responseId"})
    if (out.contains(key)) response[key] = out[key];
  return response;
}

}  // namespace

std::unique_ptr<stream_filter> make_gemini_stream_filter(const wire_format& gemini, std::string tool_name) {
  return std::make_unique<gemini_stream>(gemini, std::move(tool_name));
}

std::optional<nlohmann::json> assemble_gemini_stream(std::string_view sse_text) { return sse::assemble_guarded(sse_text, assemble); }

}  // namespace gistproxy::rewrite
