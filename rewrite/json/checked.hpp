// Checked access to JSON the other side controls (upstream answers, the
// model's tool-call arguments, store headers, trace files). nlohmann's
// value()/get<>()/operator[] throw (or assert) on a shape they did not
// expect; these never do: a member of the wrong type reads as absent.
//
// Parsing is bounded too: nlohmann parses iteratively, but dump(), copies and
// our own walks recurse, so a document nested deeper than max_depth is refused
// before it becomes a tree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rewrite/json/wtf8_dump.hpp"

namespace gistproxy::rewrite::checked {

// Deeper than any API body we know (Anthropic content blocks nest ~8 deep).
inline constexpr std::size_t default_max_depth = 128;

// True when the nesting of arrays and objects in `text` never exceeds
// max_depth. One linear pass; strings (and their escapes) are skipped.
inline bool within_depth(std::string_view text, std::size_t max_depth = default_max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

// Parses untrusted text: a discarded value (is_discarded()) when it is not
// JSON or nests deeper than max_depth. Never throws on the input's content.
template <class Json = nlohmann::json>
Json parse(std::string_view text, std::size_t max_depth = default_max_depth) {
  if (!within_depth(text, max_depth)) return Json(Json::value_t::discarded);
  return Json::parse(text, nullptr, false);
}

// Serialises without ever throwing. A lone surrogate kept as WTF-8 (as
// json::parse_checked keeps those an upstream sent) goes out as the `\udXXX`
// escape it came in as, never U+FFFD; any other byte that is not UTF-8 (only
// a bug could put one into a tree we built) becomes U+FFFD rather than a 500.
template <class Json>
std::string dump(const Json& j) {
  try {
    return j.dump(-1, ' ', false, Json::error_handler_t::strict);
  } catch (const typename Json::type_error&) {
    // nlohmann refuses only bytes that are not UTF-8: rare enough (an answer
    // with a lone surrogate) that the common case keeps nlohmann's speed.
    return ::gistproxy::rewrite::json::dump_wtf8(j);
  }
}

template <class Json>
const Json& null_of() {
  static const Json v;
  return v;
}
template <class Json>
const Json& empty_object_of() {
  static const Json v = Json::object();
  return v;
}
template <class Json>
const Json& empty_array_of() {
  static const Json v = Json::array();
  return v;
}

// The member `key` of `j`, or null when `j` is not an object or lacks it.
template <class Json>
const Json& member(const Json& j, std::string_view key) {
  if (!j.is_object()) return null_of<Json>();
  auto it = j.find(key);
  return it == j.end() ? null_of<Json>() : *it;
}

// The member as an object / array; an empty one when absent or of another type.
template <class Json>
const Json& object_at(const Json& j, std::string_view key) {
  const Json& m = member(j, key);
  return m.is_object() ? m : empty_object_of<Json>();
}
template <class Json>
const Json& array_at(const Json& j, std::string_view key) {
  const Json& m = member(j, key);
  return m.is_array() ? m : empty_array_of<Json>();
}

// Element i of an array; null when `a` is not an array or too short.
template <class Json>
const Json& element(const Json& a, std::size_t i) {
  return a.is_array() && i < a.size() ? a[i] : null_of<Json>();
}

// The member as a string; `fallback` when absent or not a string.
template <class Json>
std::string string_at(const Json& j, std::string_view key, std::string_view fallback = {}) {
  const Json& m = member(j, key);
  return m.is_string() ? m.template get_ref<const typename Json::string_t&>() : std::string(fallback);
}

// True when the member is a string equal to `expected`.
template <class Json>
bool string_is(const Json& j, std::string_view key, std::string_view expected) {
  const Json& m = member(j, key);
  return m.is_string() && m.template get_ref<const typename Json::string_t&>() == expected;
}

// The member as a signed integer (an unsigned beyond int64 or a float does
// not count); nullopt otherwise.
template <class Json>
std::optional<std::int64_t> integer_at(const Json& j, std::string_view key) {
  const Json& m = member(j, key);
  if (m.is_number_unsigned()) {
    auto u = m.template get<std::uint64_t>();
    if (u > std::uint64_t(INT64_MAX)) return std::nullopt;
    return std::int64_t(u);
  }
  if (m.is_number_integer()) return m.template get<std::int64_t>();
  return std::nullopt;
}

}  // namespace gistproxy::rewrite::checked
