// Responses streams: response.created / in_progress once, sequence_number and
// output_index renumbered across hops, read_blob function_call items withheld,
// client function_call items held to the end of the turn, one
// response.completed at the end (the last hop's id, every client-visible
// output item, usage summed).
#include <map>

#include "rewrite/json/splice.hpp"
#include "rewrite/dialects/responses/responses_stream.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/sse/assemble.hpp"

namespace gistproxy::rewrite {
namespace {

bool is_terminal(std::string_view t) {
  return t == "response.completed" || t == "response.incomplete" || t == "response.failed";
}

class responses_stream final : public stream_filter {
 public:
  responses_stream(const wire_format& d, std::string tool) : wire_(d), tool_(std::move(tool)) {}

  std::string on_event(const sse::event& e) override {
    if (e.comment_only) return std::string(e.raw);
    auto data = json::parse_checked(e.data);
    if (!data.is_object()) return std::string(e.raw);
    const std::string type = checked::string_at(data, "type", e.name);
    if (type == "response.created" || type == "response.in_progress" || type == "response.queued") {
      if (type == "response.created" && first_response_.is_null()) first_response_ = checked::member(data, "response");
      if (hop_ > 0) return {};
      return emit(type, data);
    }
    if (is_terminal(type)) {
      terminal_type_ = type;
      hop_terminal_ = true;
      last_response_ = checked::member(data, "response");
      add_numbers(usage_, checked::member(last_response_, "usage"));
      hop_output_ = checked::array_at(last_response_, "output");
      return {};
    }
    auto output_index = checked::integer_at(data, "output_index");
    if (!output_index) return emit(type, data);
    auto upstream_index = *output_index;
    auto& item = items_[upstream_index];
    if (type == "response.output_item.added") {
      const auto& it = checked::member(data, "item");
      bool call = checked::string_is(it, "type", "function_call");
      item.ours = call && checked::string_is(it, "name", tool_);
      item.held = call && !item.ours;
      if (!item.ours && !item.held) item.client_index = next_index_++;
    }
    if (type == "response.output_item.done") {
      item.done = checked::member(data, "item");
      if (!item.ours) client_output_.push_back(item.done);
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
        end.calls.push_back({checked::string_at(it.done, "call_id"), checked::string_at(it.done, "arguments", "{}")});
    end.response = {{"id", checked::member(last_response_, "id")},
                    {"output", hop_output_}};
    held_.clear();
    for (auto& [index, it] : items_)
      if (it.held) held_.push_back(it);
    if (!end.calls.empty()) {
      // The model re-issues its client calls next hop: forget this hop's.
      held_.clear();
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& o : client_output_)
        if (!checked::string_is(o, "type", "function_call")) kept.push_back(o);
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
        out += emit(checked::string_at(ev, "type"), ev);
      }
    }
    auto response = last_response_.is_object() ? last_response_ : first_response_;
    if (!response.is_object()) response = nlohmann::json::object();
    // The last hop's id: its stored state holds the whole conversation (the
    // first hop's ends in an unanswered read_blob call). response.created
    // went out with the first hop's id and cannot be unsent; SDKs take the
    // id from the completed response.
    if (!response.contains("id") && first_response_.is_object() && first_response_.contains("id"))
      response["id"] = first_response_["id"];
    response["output"] = client_output_;
    if (usage_.is_object()) response["usage"] = usage_;
    out += emit(terminal_type_.empty() ? "response.completed" : terminal_type_,
                {{"type", terminal_type_.empty() ? "response.completed" : terminal_type_}, {"response", response}});
    return out;
  }

  token_usage usage() const override {
    return wire_.usage_from_fields(usage_fields_of(usage_));
  }

  std::string keepalive() const override { return ": keepalive\n\n"; }

  std::string error_event(std::string_view type, std::string_view message) const override {
    nlohmann::json data = {{"type", "error"}, {"code", type}, {"message", message}, {"param", nullptr},
                           {"sequence_number", sequence_}};
    return sse_event("error", checked::dump(data));
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
    if (auto r = data.find("response"); r != data.end()) restore_echoed(*r, echoed_);
    return sse_event(type, checked::dump(data));
  }

  const wire_format& wire_;
  std::string tool_;
  int hop_ = 0, next_index_ = 0;
  std::int64_t sequence_ = 0;
  nlohmann::json first_response_, last_response_, usage_, hop_output_ = nlohmann::json::array();
  nlohmann::json client_output_ = nlohmann::json::array();
  std::string terminal_type_;
  bool hop_terminal_ = false;  // this hop's response.completed (or incomplete/failed) arrived
  std::map<std::int64_t, item_state> items_;
  std::vector<item_state> held_;
};

}  // namespace

std::unique_ptr<stream_filter> make_responses_stream_filter(const wire_format& responses, std::string tool_name) {
  return std::make_unique<responses_stream>(responses, std::move(tool_name));
}

namespace {

using json = nlohmann::json;

// Responses' stream assembled: the response carried by the terminal event.
std::optional<json> assemble_responses_events(const std::vector<std::pair<std::string, json>>& events) {
  std::optional<json> last;
  for (const auto& [name, e] : events) {
    auto type = e.value("type", "");
    if (type == "error") return e;
    if (type.rfind("response.", 0) == 0 && e.contains("response") && e["response"].is_object()) last = e["response"];
  }
  return last;  // the terminal event (completed, incomplete, failed) carries the whole response
}

}  // namespace

std::optional<nlohmann::json> assemble_responses_stream(std::string_view sse_text) {
  return sse::assemble_guarded(sse_text, [](const auto& events) { return assemble_responses_events(events); });
}

}  // namespace gistproxy::rewrite
