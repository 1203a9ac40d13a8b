#include "rewrite/usage/usage_fields.hpp"

#include <charconv>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {
namespace {

// An integer token (the scanner has checked the number grammar): no fraction
// or exponent, and within int64, as checked::integer_at on a tree.
std::optional<std::int64_t> integer_token(std::string_view text) {
  for (char c : text)
    if ((c < '0' || c > '9') && c != '-') return std::nullopt;  // '.', 'e', 'E' or '+': not an integer
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Unescapes a key only when it has escapes (never, in practice).
std::string_view key_text(std::string_view raw, std::string& scratch) {
  if (raw.find('\\') == std::string_view::npos) return raw;
  scratch.clear();
  json::unescape(raw, scratch);
  return scratch;
}

// Walks one object level; a nested object is walked once more (depth 2),
// its members named "parent.member".
bool read_level(json::cursor& c, std::string_view parent, int depth, usage_fields& out) {
  std::string scratch;
  return c.object([&](std::string_view raw_key, json::cursor& v) {
            auto k = v.peek();
            if (k == json::kind::object && depth < 2) return read_level(v, key_text(raw_key, scratch), depth + 1, out);
            auto r = v.skip_value();
            if (!r) return false;
            if (k == json::kind::number)
              if (auto n = integer_token(v.doc().substr(r->begin, r->size())))
                out.add(parent, key_text(raw_key, scratch), *n);
            return true;
          })
      .has_value();
}

void add_level(const nlohmann::json& object, std::string_view parent, int depth, usage_fields& out) {
  for (const auto& [key, value] : object.items()) {
    if (value.is_object() && depth < 2) {
      add_level(value, key, depth + 1, out);
      continue;
    }
    if (auto n = checked::integer_at(object, key)) out.add(parent, key, *n);
  }
}

}  // namespace

std::optional<std::int64_t> usage_fields::get(std::string_view wanted) const {
  for (std::size_t i = count_; i-- > 0;)
    if (path(i) == wanted) return fields_[i].value;
  return std::nullopt;
}

bool usage_fields::add(std::string_view parent, std::string_view name, std::int64_t value) {
  // No request has a trillion tokens: a count outside [0, 1e12] is hostile or
  // broken and is left out (as if the API had not reported it), so token and
  // cost counters never wrap or overflow.
  if (value < 0 || value > max_token_count) return true;
  const std::size_t dot = parent.empty() ? 0 : 1;
  const std::size_t size = parent.size() + dot + name.size();
  if (count_ == max_fields || size > max_name_bytes - name_bytes_) return false;
  char* at = names_.data() + name_bytes_;
  std::memcpy(at, parent.data(), parent.size());
  if (dot) at[parent.size()] = '.';
  std::memcpy(at + parent.size() + dot, name.data(), name.size());
  fields_[count_++] = {std::uint16_t(name_bytes_), std::uint16_t(size), value};
  name_bytes_ += size;
  return true;
}

std::int64_t saturating_sum(std::int64_t a, std::int64_t b, std::int64_t c) {
  std::int64_t ab = 0, abc = 0;
  if (__builtin_add_overflow(a, b, &ab) || __builtin_add_overflow(ab, c, &abc)) return a < 0 ? INT64_MIN : INT64_MAX;
  return abc;
}

bool read_usage_value(json::cursor& at, std::optional<usage_fields>& out) {
  out.reset();
  if (at.peek() != json::kind::object) return at.skip_value().has_value();
  usage_fields fields;
  if (!read_level(at, "", 1, fields)) return false;
  out = fields;
  return true;
}

std::optional<usage_fields> read_usage_fields(std::string_view object_text) {
  json::cursor c(object_text);
  if (c.peek() != json::kind::object) return std::nullopt;
  std::optional<usage_fields> out;
  if (!read_usage_value(c, out) || !c.at_end()) return std::nullopt;
  return out;
}

usage_fields usage_fields_of(const nlohmann::json& object) {
  usage_fields out;
  if (object.is_object()) add_level(object, "", 1, out);
  return out;
}

}  // namespace gistproxy::rewrite
