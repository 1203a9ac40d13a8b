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

// The code unit of the surrogate whose three bytes start at s[at] when it is
// a high (lead) one, or a low one; 0 otherwise.
unsigned surrogate_at(std::string_view s, std::size_t at, bool high) {
  if (at + 3 > s.size() || static_cast<unsigned char>(s[at]) != 0xED) return 0;
  const auto b1 = static_cast<unsigned char>(s[at + 1]);
  if (b1 < (high ? 0xA0 : 0xB0) || b1 > (high ? 0xAF : 0xBF)) return 0;
  return 0xD000u | (unsigned(b1 & 0x3F) << 6) | unsigned(s[at + 2] & 0x3F);
}

// WTF-8 writes a surrogate pair as the one character it stands for: a high
// surrogate's three bytes followed by a low one's (an escape beside raw
// bytes, or CESU-8) are joined, so a lone surrogate is all the tree keeps.
void join_surrogate_pairs(std::string& s) {
  std::string joined;
  joined.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned hi = surrogate_at(s, i, true), lo = hi ? surrogate_at(s, i + 3, false) : 0;
    if (!lo) {
      joined += s[i++];
      continue;
    }
    text::append_utf8(joined, 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
    i += 6;
  }
  s = std::move(joined);
}

// As strict as nlohmann: no raw control characters, only valid UTF-8, and
// no lone surrogates (which have no UTF-8 form) unless they are kept, escaped
// or as their raw three bytes, as WTF-8.
bool unescape_strict(std::string_view raw, std::string& out, lone_surrogates lone) {
  for (char ch : raw)
    if (static_cast<unsigned char>(ch) < 0x20) return false;
  bool lossy = false;
  if (!unescape(raw, out, &lossy, lone) || lossy) return false;
  if (text::is_valid_utf8(out)) return true;  // the common case: one pass
  if (lone == lone_surrogates::replace || !text::is_utf8_with_surrogates(out)) return false;
  join_surrogate_pairs(out);
  return true;
}

bool string_of(cursor& c, std::string& out, lone_surrogates lone) {
  auto raw = c.string_raw();
  return raw && unescape_strict(*raw, out, lone);
}

bool build(cursor& c, nlohmann::json& out, std::size_t depth, lone_surrogates lone) {
  switch (c.peek()) {
    case kind::object: {
      if (depth == 0) return false;
      out = nlohmann::json::object();
      std::string key;
      return c.object([&](std::string_view raw_key, cursor& v) {
                key.clear();
                if (!unescape_strict(raw_key, key, lone)) return false;
                nlohmann::json value;
                if (!build(v, value, depth - 1, lone)) return false;
                out[key] = std::move(value);  // a repeated key keeps its last value, as nlohmann does
                return true;
              }).has_value();
    }
    case kind::array: {
      if (depth == 0) return false;
      out = nlohmann::json::array();
      return c.array([&](std::size_t, cursor& v) {
                nlohmann::json value;
                if (!build(v, value, depth - 1, lone)) return false;
                out.push_back(std::move(value));
                return true;
              }).has_value();
    }
    case kind::string: {
      std::string s;
      if (!string_of(c, s, lone)) return false;
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

std::optional<nlohmann::json> parse_tree(std::string_view text, std::size_t max_depth, lone_surrogates lone) {
  cursor c(text);
  nlohmann::json out;
  if (!build(c, out, max_depth, lone) || c.failed() || !c.at_end()) return std::nullopt;
  return out;
}

nlohmann::json parse_checked(std::string_view text, std::size_t max_depth) {
  auto tree = parse_tree(text, max_depth, lone_surrogates::keep);
  return tree ? std::move(*tree) : nlohmann::json(nlohmann::json::value_t::discarded);
}

}  // namespace gistproxy::rewrite::json
