// Reads of the Responses API's stored state shown as the client's own: which
// requests they are, the target sent instead, and the answers' client view.
#include "rewrite/dialects/responses/responses_stored.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include "rewrite/json/checked.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::rewrite {
namespace {

// The API's input_items page: 20 items unless asked, 100 at most.
constexpr std::size_t default_items_limit = 20, max_items_limit = 100;

bool named_in(const nlohmann::json& item, const std::vector<std::string>& names) {
  const auto name = checked::string_at(item, "name");
  return !name.empty() && std::find(names.begin(), names.end(), name) != names.end();
}

bool is_call_of(const nlohmann::json& item, const std::vector<std::string>& tools) {
  return checked::string_is(item, "type", "function_call") && named_in(item, tools);
}

// Sets `key` to `value` when the response has it and it differs.
bool replace_member(nlohmann::json& response, std::string_view key, const nlohmann::json& value) {
  auto it = response.find(key);
  if (it == response.end() || *it == value) return false;
  *it = value;
  return true;
}

// Takes out of the array at `key` the elements `ours` picks; true when any went.
template <class Pick>
bool remove_from(nlohmann::json& object, std::string_view key, Pick ours) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return false;
  const auto before = it->size();
  nlohmann::json kept = nlohmann::json::array();
  for (auto& element : *it)
    if (!ours(element)) kept.push_back(std::move(element));
  *it = std::move(kept);
  return it->size() != before;
}

// The target's query with every pair named `name` (as the API reads names:
// %-decoded, as first_query_value does) replaced by one `name=value`. A query
// too long to read whole is left as sent rather than cut.
std::string with_param(std::string_view target, std::string_view name, std::string_view value) {
  const auto pairs = query_pairs(target);
  if (!pairs.complete()) return std::string(target);
  std::string out(path_of(target));
  out += '?';
  for (const auto& pair : pairs)
    if (!pair.named(name)) out.append(pair.sent).append(1, '&');
  return out.append(name).append(1, '=').append(value);
}

}  // namespace

std::size_t stored_turn::bytes() const {
  std::size_t n = sizeof(*this) + stored_id.size() + tool.size() + checked::dump(tool_choice).size() +
                  checked::dump(previous_response_id).size();
  for (const auto& s : hop_items) n += s.size() + sizeof(s);
  for (const auto& s : read_calls) n += s.size() + sizeof(s);
  return n;
}

bool is_response_id(std::string_view id) {
  return !id.empty() && id.size() <= 256 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::optional<stored_read> stored_read_of(std::string_view method, std::string_view target) {
  const bool get = method == "GET";
  if (!get && method != "DELETE") return std::nullopt;
  const auto path = path_of(target);
  constexpr std::string_view marker = "/responses/";
  const auto at = path.rfind(marker);
  if (at == std::string_view::npos) return std::nullopt;
  stored_read read;
  read.id_at = at + marker.size();
  auto rest = path.substr(read.id_at);
  const auto slash = rest.find('/');
  read.id = std::string(rest.substr(0, slash));
  rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (!is_response_id(read.id)) return std::nullopt;
  if (rest == "/input_items" && get) {
    read.what = stored_read::kind::input_items;
  } else if (!rest.empty()) {
    return std::nullopt;
  } else if (!get) {
    read.what = stored_read::kind::remove;
  } else {
    read.stream = first_query_value(target, "stream") == std::optional<std::string_view>("true");
  }
  return read;
}

std::optional<std::size_t> items_limit(std::string_view target) {
  const auto text = first_query_value(target, "limit");
  if (!text) return default_items_limit;
  std::size_t limit = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), limit);
  if (error != std::errc() || end != text->data() + text->size() || limit < 1 || limit > max_items_limit)
    return std::nullopt;
  return limit;
}

std::string stored_target(std::string_view target, const stored_read& read, std::string_view stored_id,
                          std::size_t hidden) {
  std::string out(target.substr(0, read.id_at));
  out.append(stored_id).append(target.substr(read.id_at + read.id.size()));
  if (read.what != stored_read::kind::input_items || hidden == 0) return out;
  const auto limit = items_limit(target);
  if (!limit) return out;
  return with_param(out, "limit", std::to_string(std::min(max_items_limit, *limit + hidden)));
}

bool show_client_response(nlohmann::json& response, const stored_turn& turn, std::string_view client_id) {
  if (!response.is_object()) return false;
  bool changed = replace_member(response, "id", std::string(client_id));
  const std::vector<std::string> tools = {turn.tool};
  if (!turn.tool.empty()) {
    if (turn.tool_added)
      changed |= remove_from(response, "tools", [&](const nlohmann::json& t) {
        return checked::string_is(t, "type", "function") && named_in(t, tools);
      });
    changed |= remove_from(response, "output", [&](const nlohmann::json& item) { return is_call_of(item, tools); });
  }
  changed |= replace_member(response, "tool_choice", turn.tool_choice);
  changed |= replace_member(response, "previous_response_id", turn.previous_response_id);
  return changed;
}

bool show_client_items(nlohmann::json& list, const gistproxy_items& ours, std::size_t limit) {
  if (!list.is_object() || !checked::member(list, "data").is_array()) return false;
  auto& data = list["data"];
  std::set<std::string> calls_here;  // read_blob calls listed on this page
  for (const auto& item : data)
    if (is_call_of(item, ours.tools)) calls_here.insert(checked::string_at(item, "call_id"));
  const auto is_ours = [&](const nlohmann::json& item) {
    if (is_call_of(item, ours.tools)) return true;
    if (checked::string_is(item, "type", "function_call_output")) {
      const auto call = checked::string_at(item, "call_id");
      if (calls_here.count(call) || (ours.read_call && ours.read_call(call))) return true;
    }
    const auto id = checked::string_at(item, "id");
    return !id.empty() && std::find(ours.hop_items.begin(), ours.hop_items.end(), id) != ours.hop_items.end();
  };
  bool changed = remove_from(list, "data", is_ours);
  const bool cut = data.size() > limit;
  if (cut) data.erase(data.begin() + std::ptrdiff_t(limit), data.end());
  if (!changed && !cut) return false;
  const bool more = cut || checked::member(list, "has_more") == true;
  list["has_more"] = more;
  if (!data.empty()) {
    list["first_id"] = checked::member(data.front(), "id");
    list["last_id"] = checked::member(data.back(), "id");
  } else {
    // Nothing of the client's on this page: with more to come, the
    // upstream's cursor still moves the next page on.
    list["first_id"] = nullptr;
    if (!more) list["last_id"] = nullptr;
  }
  return true;
}

bool shows_read_blob(const nlohmann::json& answer, const std::vector<std::string>& tools) {
  const auto tool = [&](const nlohmann::json& t) { return checked::string_is(t, "type", "function") && named_in(t, tools); };
  const auto& offered = checked::array_at(answer, "tools");
  if (std::any_of(offered.begin(), offered.end(), tool)) return true;
  for (const auto* key : {"output", "data"}) {
    const auto& items = checked::array_at(answer, key);
    if (std::any_of(items.begin(), items.end(), [&](const nlohmann::json& i) { return is_call_of(i, tools); })) return true;
  }
  return false;
}

}  // namespace gistproxy::rewrite
