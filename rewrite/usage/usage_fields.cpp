#include "rewrite/usage/usage_fields.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {
namespace {

// An integer token (the scanner has checked the number grammar): no fraction
// or exponent, and within int64, as checked::integer_at on a tree.
std::optional<std::int64_t> integer_token(std::string_view text) {
  if (text.find_first_of(".eE") != std::string_view::npos) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string key_text(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  std::string out;
  json::unescape(raw, out);
  return out;
}

// Walks one object level; nested objects are walked once more (depth 2).
bool read_level(json::cursor& c, const std::string& prefix, int depth, usage_fields& out) {
  return c.object([&](std::string_view raw_key, json::cursor& v) {
            auto k = v.peek();
            if (k == json::kind::object && depth < 2)
              return read_level(v, prefix + key_text(raw_key) + '.', depth + 1, out);
            auto r = v.skip_value();
            if (!r) return false;
            if (k == json::kind::number)
              if (auto n = integer_token(v.doc().substr(r->begin, r->size()))) out.add(prefix + key_text(raw_key), *n);
            return true;
          })
      .has_value();
}

void add_level(const nlohmann::json& object, const std::string& prefix, int depth, usage_fields& out) {
  for (const auto& [key, value] : object.items()) {
    if (value.is_object() && depth < 2) {
      add_level(value, prefix + key + '.', depth + 1, out);
      continue;
    }
    if (auto n = checked::integer_at(object, key)) out.add(prefix + key, *n);
  }
}

}  // namespace

std::optional<std::int64_t> usage_fields::get(std::string_view path) const {
  for (auto it = fields_.rbegin(); it != fields_.rend(); ++it)
    if (it->first == path) return it->second;
  return std::nullopt;
}

void usage_fields::add(std::string path, std::int64_t value) {
  if (fields_.size() < max_fields) fields_.emplace_back(std::move(path), value);
}

std::optional<usage_fields> read_usage_fields(std::string_view object_text) {
  json::cursor c(object_text);
  if (c.peek() != json::kind::object) return std::nullopt;
  usage_fields out;
  if (!read_level(c, "", 1, out) || !c.at_end()) return std::nullopt;
  return out;
}

usage_fields usage_fields_of(const nlohmann::json& object) {
  usage_fields out;
  if (object.is_object()) add_level(object, "", 1, out);
  return out;
}

}  // namespace gistproxy::rewrite
