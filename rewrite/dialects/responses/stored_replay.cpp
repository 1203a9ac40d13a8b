// A stored response replayed as events (GET …/{id}?stream=true), shown as
// the client's: one upstream "hop", nothing paged in, nothing held back.
#include <iterator>
#include <set>

#include "rewrite/dialects/responses/responses_stored.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"

namespace gistproxy::rewrite {
namespace {

bool is_terminal(std::string_view t) {
  return t == "response.completed" || t == "response.incomplete" || t == "response.failed";
}

class stored_replay final : public stream_filter {
 public:
  stored_replay(stored_turn turn, std::string client_id) : turn_(std::move(turn)), client_id_(std::move(client_id)) {}

  std::string on_event(const sse::event& e) override {
    if (e.comment_only) return std::string(e.raw);
    auto data = json::parse_checked(e.data);
    if (!data.is_object()) return std::string(e.raw);
    const std::string type = checked::string_at(data, "type", e.name);
    complete_ |= is_terminal(type);
    bool changed = false;
    if (auto r = data.find("response"); r != data.end()) changed |= show_client_response(*r, turn_, client_id_);
    if (auto index = checked::integer_at(data, "output_index")) {
      const auto& item = checked::member(data, "item");
      if (type == "response.output_item.added" && !turn_.tool.empty() &&
          checked::string_is(item, "type", "function_call") && checked::string_is(item, "name", turn_.tool))
        ours_.insert(*index);
      if (ours_.count(*index)) return {};  // a read_blob call's event: not the client's
      const auto shift = std::int64_t(std::distance(ours_.begin(), ours_.lower_bound(*index)));
      if (shift) {
        data["output_index"] = *index - shift;
        changed = true;
      }
    }
    if (auto sequence = checked::integer_at(data, "sequence_number")) {
      // Consecutive from the first event's number: unchanged unless events were left out.
      if (!first_sequence_) first_sequence_ = *sequence;
      const auto renumbered = *first_sequence_ + sent_;
      if (renumbered != *sequence) {
        data["sequence_number"] = renumbered;
        changed = true;
      }
    }
    ++sent_;
    return changed ? sse_event(e.name.empty() ? std::string_view(type) : e.name, checked::dump(data)) : std::string(e.raw);
  }

  hop_end end_hop() override {
    hop_end end;
    end.complete = complete_;
    return end;
  }
  std::string finish() override { return {}; }
  token_usage usage() const override { return {}; }
  std::string keepalive() const override { return ": keepalive\n\n"; }
  std::string error_event(std::string_view type, std::string_view message) const override {
    nlohmann::json data = {{"type", "error"}, {"code", type}, {"message", message}, {"param", nullptr},
                           {"sequence_number", first_sequence_.value_or(0) + sent_}};
    return sse_event("error", checked::dump(data));
  }

 private:
  stored_turn turn_;
  std::string client_id_;
  std::set<std::int64_t> ours_;  // output indices of read_blob calls
  std::optional<std::int64_t> first_sequence_;
  std::int64_t sent_ = 0;
  bool complete_ = false;
};

}  // namespace

std::unique_ptr<stream_filter> make_stored_replay_filter(stored_turn turn, std::string client_id) {
  return std::make_unique<stored_replay>(std::move(turn), std::move(client_id));
}

}  // namespace gistproxy::rewrite
