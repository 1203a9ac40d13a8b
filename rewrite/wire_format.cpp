#include "rewrite/wire_format.hpp"

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/json/tree.hpp"

namespace gistproxy::rewrite {

std::string wire_format::image_replacement(std::string_view text) const {
  std::string out = "\"";
  json::escape_into(out, text);
  out += '"';
  return out;
}

token_usage wire_format::usage_from_response(std::string_view body) const {
  // Responses can be large (long completions); find "usage" with the scanner
  // and read that small object's numbers in the same walk.
  json::cursor c(body);
  std::optional<usage_fields> fields;
  if (c.peek() != json::kind::object) return {};
  bool ok = c.object([&](std::string_view key, json::cursor& v) {
                if (key == usage_member()) return read_usage_value(v, fields);  // the last one counts
                return v.skip_value().has_value();
              }).has_value();
  if (!ok || !fields) return {};
  return usage_from_fields(*fields);
}

token_usage wire_format::usage_from_response(const nlohmann::json& body) const {
  return usage_from_fields(usage_fields_of(checked::member(body, usage_member())));
}

nlohmann::json wire_format::echoed_members(std::string_view, top_level_memo&) const { return nlohmann::json::object(); }

bool restore_echoed(nlohmann::json& response, const nlohmann::json& echoed) {
  if (!response.is_object() || !echoed.is_object()) return false;
  bool changed = false;
  for (const auto& [key, value] : echoed.items()) {
    auto it = response.find(key);
    if (it == response.end() || *it == value) continue;
    *it = value;
    changed = true;
  }
  return changed;
}

wire_format::insertion wire_format::tools_insertion(std::string_view, const request_scan& scan,
                                                    std::string_view definition) const {
  return {scan.object_end, ",\"tools\":[" + std::string(definition) + "]"};
}

}  // namespace gistproxy::rewrite
