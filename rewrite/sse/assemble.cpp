#include "rewrite/sse/assemble.hpp"

#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/sse/event_parser.hpp"
#include "rewrite/stream_filter.hpp"

namespace gistproxy::rewrite {

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

void sse::append_string(nlohmann::json& obj, const char* key, const nlohmann::json& piece) {
  if (!piece.is_string()) return;
  if (!obj.contains(key) || !obj[key].is_string()) obj[key] = "";
  obj[key] = obj[key].get<std::string>() + piece.get<std::string>();
}

std::string sse_event(std::string_view name, const std::string& data) {
  std::string out = "event: ";
  out += name;
  out += "\ndata: ";
  out += data;
  out += "\n\n";
  return out;
}

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

}  // namespace sse

}  // namespace gistproxy::rewrite
