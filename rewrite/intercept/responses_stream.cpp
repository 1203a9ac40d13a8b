// Responses streams: response.created / in_progress once, sequence_number and
// output_index renumbered across hops, read_blob function_call items withheld,
// client function_call items held to the end of the turn, one
// response.completed at the end (first hop's id, every client-visible output
// item, usage summed).
#include <map>

#include "rewrite/intercept/splice.hpp"
#include "rewrite/intercept/stream_filter.hpp"

namespace gistproxy::rewrite {
namespace {

bool is_terminal(std::string_view t) {
  return t == "response.completed" || t == "response.incomplete" || t == "response.failed";
}

class responses_stream final : public stream_filter {
 public:
  explicit responses_stream(std::string tool) : tool_(std::move(tool)) {}

  std::string on_event(const sse::event& e) override {
    if (e.comment_only) return std::string(e.raw);
    auto data = nlohmann::json::parse(e.data, nullptr, false);
    if (!data.is_object()) return std::string(e.raw);
    const std::string type = data.value("type", std::string(e.name));
    if (type == "response.created" || type == "response.in_progress" || type == "response.queued") {
      if (type == "response.created" && first_response_.is_null()) first_response_ = data["response"];
      if (hop_ > 0) return {};
      return emit(type, data);
    }
    if (is_terminal(type)) {
      terminal_type_ = type;
      hop_terminal_ = true;
      last_response_ = data["response"];
      if (auto u = last_response_.find("usage"); u != last_response_.end()) add_numbers(usage_, *u);
      hop_output_ = last_response_.value("output", nlohmann::json::array());
      return {};
    }
    if (!data.contains("output_index")) return emit(type, data);
    int upstream_index = data.value("output_index", 0);
    auto& item = items_[upstream_index];
    if (type == "response.output_item.added") {
      const auto& it = data["item"];
      bool call = it.value("type", "") == "function_call";
      item.ours = call && it.value("name", "") == tool_;
      item.held = call && !item.ours;
      if (!item.ours && !item.held) item.client_index = next_index_++;
    }
    if (type == "response.output_item.done") {
      item.done = data["item"];
      if (!item.ours) client_output_.push_back(data["item"]);
    }
    if (item.ours) return {};
    if (item.held) {
      item.events.push_back(data);
      return {};
    }
    data["output_index"] = item.client_index;
    return emit(type, data);
  }

  hop_end end_hop() override {
    hop_end end;
    end.complete = hop_terminal_;
    hop_terminal_ = false;
    for (const auto& [index, it] : items_)
      if (it.ours && it.done.is_object())
        end.calls.push_back({it.done.value("call_id", ""), it.done.value("arguments", "{}")});
    end.response = {{"id", last_response_.is_object() ? last_response_.value("id", nlohmann::json()) : nlohmann::json()},
                    {"output", hop_output_}};
    held_.clear();
    for (auto& [index, it] : items_)
      if (it.held) held_.push_back(it);
    if (!end.calls.empty()) {
      // The model re-issues its client calls next hop: forget this hop's.
      held_.clear();
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& o : client_output_)
        if (o.value("type", "") != "function_call") kept.push_back(o);
      client_output_ = std::move(kept);
    }
    items_.clear();
    ++hop_;
    return end;
  }

  std::string finish() override {
    std::string out;
    for (auto& it : held_) {
      int index = next_index_++;
      for (auto& ev : it.events) {
        ev["output_index"] = index;
        out += emit(ev.value("type", ""), ev);
      }
    }
    auto response = last_response_.is_object() ? last_response_ : first_response_;
    if (first_response_.is_object() && first_response_.contains("id")) response["id"] = first_response_["id"];
    response["output"] = client_output_;
    if (usage_.is_object()) response["usage"] = usage_;
    out += emit(terminal_type_.empty() ? "response.completed" : terminal_type_,
                {{"type", terminal_type_.empty() ? "response.completed" : terminal_type_}, {"response", response}});
    return out;
  }

  token_usage usage() const override {
    token_usage u;
    if (usage_.is_object()) {
      u.input_tokens = usage_.value("input_tokens", std::int64_t(-1));
      u.output_tokens = usage_.value("output_tokens", std::int64_t(-1));
    }
    return u;
  }

  std::string keepalive() const override { return ": keepalive\n\n"; }

  std::string error_event(std::string_view type, std::string_view message) const override {
    nlohmann::json data = {{"type", "error"}, {"code", type}, {"message", message}, {"param", nullptr},
                           {"sequence_number", sequence_}};
    return sse_event("error", data.dump());
  }

 private:
  struct item_state {
    bool ours = false, held = false;
    int client_index = -1;
    nlohmann::json done;
    std::vector<nlohmann::json> events;
  };

  std::string emit(const std::string& type, nlohmann::json data) {
    data["sequence_number"] = sequence_++;  // monotonic across hops
    return sse_event(type, data.dump());
  }

  std::string tool_;
  int hop_ = 0, next_index_ = 0;
  std::int64_t sequence_ = 0;
  nlohmann::json first_response_, last_response_, usage_, hop_output_ = nlohmann::json::array();
  nlohmann::json client_output_ = nlohmann::json::array();
  std::string terminal_type_;
  bool hop_terminal_ = false;  // this hop's response.completed (or incomplete/failed) arrived
  std::map<int, item_state> items_;
  std::vector<item_state> held_;
};

}  // namespace

std::unique_ptr<stream_filter> make_responses_stream_filter(std::string tool_name) {
  return std::make_unique<responses_stream>(std::move(tool_name));
}

}  // namespace gistproxy::rewrite
