#include "rewrite/json/tree.hpp"

#include <charconv>
#include <cstdint>
#include <string>

#include "rewrite/json/scanner.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite::json {
namespace {

// -?(0|[1-9][0-9]*): JSON's integer grammar, which from_chars alone is looser than.
bool is_json_integer(std::string_view t) {
  if (!t.empty() && t.front() == '-') t.remove_prefix(1);
  if (t.empty() || (t.size() > 1 && t.front() == '0')) return false;
  for (char c : t)
    if (c < '0' || c > '9') return false;
  return true;
}

std::optional<nlohmann::json> number(std::string_view t) {
  if (is_json_integer(t)) {
    const char* end = t.data() + t.size();
    if (t.front() != '-') {
      std::uint64_t u = 0;
      if (auto r = std::from_chars(t.data(), end, u); r.ec == std::errc() && r.ptr == end) return nlohmann::json(u);
    } else {
      std::int64_t i = 0;
      if (auto r = std::from_chars(t.data(), end, i); r.ec == std::errc() && r.ptr == end) return nlohmann::json(i);
    }
  }
  // Fractions, exponents and integers too large: rare in what we read, left
  // to nlohmann, which also refuses what is not a number.
  auto j = nlohmann::json::parse(t, nullptr, false);
  if (j.is_discarded() || !j.is_number()) return std::nullopt;
  return j;
}

// As strict as nlohmann: no raw control characters, no lone surrogates
// (which have no UTF-8 form), only valid UTF-8.
bool unescape_strict(std::string_view raw, std::string& out) {
  for (char ch : raw)
    if (static_cast<unsigned char>(ch) < 0x20) return false;
  bool lossy = false;
  return unescape(raw, out, &lossy) && !lossy && text::is_valid_utf8(out);
}

bool string_of(cursor& c, std::string& out) {
  auto raw = c.string_raw();
  return raw && unescape_strict(*raw, out);
}

bool build(cursor& c, nlohmann::json& out, std::size_t depth) {
  switch (c.peek()) {
    case kind::object: {
      if (depth == 0) return false;
      out = nlohmann::json::object();
      std::string key;
      return c.object([&](std::string_view raw_key, cursor& v) {
                key.clear();
                if (!unescape_strict(raw_key, key)) return false;
                nlohmann::json value;
                if (!build(v, value, depth - 1)) return false;
                out[key] = std::move(value);  // a repeated key keeps its last value, as nlohmann does
                return true;
              }).has_value();
    }
    case kind::array: {
      if (depth == 0) return false;
      out = nlohmann::json::array();
      return c.array([&](std::size_t, cursor& v) {
                nlohmann::json value;
                if (!build(v, value, depth - 1)) return false;
                out.push_back(std::move(value));
                return true;
              }).has_value();
    }
    case kind::string: {
      std::string s;
      if (!string_of(c, s)) return false;
      out = std::move(s);
      return true;
    }
    case kind::number: {
      auto r = c.skip_value();
      if (!r) return false;
      auto n = number(c.doc().substr(r->begin, r->size()));
      if (!n) return false;
      out = std::move(*n);
      return true;
    }
    case kind::boolean: {
      auto b = c.boolean_value();
      if (!b) return false;
      out = *b;
      return true;
    }
    case kind::null: {
      auto r = c.skip_value();
      if (!r || c.doc().substr(r->begin, r->size()) != "null") return false;
      out = nullptr;
      return true;
    }
    case kind::invalid:
      return false;
  }
  return false;
}

}  // namespace

std::optional<nlohmann::json> parse_tree(std::string_view text, std::size_t max_depth) {
  cursor c(text);
  nlohmann::json out;
  if (!build(c, out, max_depth) || c.failed() || !c.at_end()) return std::nullopt;
  return out;
}

nlohmann::json parse_checked(std::string_view text, std::size_t max_depth) {
  auto tree = parse_tree(text, max_depth);
  return tree ? std::move(*tree) : nlohmann::json(nlohmann::json::value_t::discarded);
}

}  // namespace gistproxy::rewrite::json
