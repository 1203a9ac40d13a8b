// Writing a tree whose strings may hold lone UTF-16 surrogates kept as WTF-8
// (json::parse_checked keeps those an upstream sent). nlohmann's dump refuses
// such bytes, or with error_handler_t::replace silently makes them U+FFFD;
// here the tree is written as nlohmann writes it (no indent), except that each
// surrogate goes out as the escape it came in as (`\ud83d`, in the lowercase
// hex nlohmann writes escapes in). checked::dump turns to this only when
// nlohmann refuses a tree, so the common case keeps nlohmann's speed.
#pragma once

#include <string>
#include <string_view>

namespace gistproxy::rewrite::json {

// Appends `bytes` as the inside of a JSON string literal: escaped as
// escape_into (and nlohmann) escape, a surrogate's three bytes (ED A0..BF xx)
// as `\udXXX`, and any other byte that is not UTF-8 as U+FFFD (only a bug
// could put one in a tree we built).
void escape_wtf8_into(std::string& out, std::string_view bytes);

template <class Json>
void dump_wtf8_into(const Json& j, std::string& out) {
  if (j.is_object()) {
    out += '{';
    for (auto it = j.cbegin(); it != j.cend(); ++it) {
      if (it != j.cbegin()) out += ',';
      out += '"';
      escape_wtf8_into(out, it.key());
      out += "\":";
      dump_wtf8_into(it.value(), out);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    for (auto it = j.cbegin(); it != j.cend(); ++it) {
      if (it != j.cbegin()) out += ',';
      dump_wtf8_into(*it, out);
    }
    out += ']';
  } else if (j.is_string()) {
    out += '"';
    escape_wtf8_into(out, j.template get_ref<const typename Json::string_t&>());
    out += '"';
  } else {
    out += j.dump();  // numbers, booleans, null: no strings inside
  }
}

template <class Json>
std::string dump_wtf8(const Json& j) {
  std::string out;
  dump_wtf8_into(j, out);
  return out;
}

}  // namespace gistproxy::rewrite::json
