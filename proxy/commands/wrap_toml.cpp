#include "proxy/commands/wrap_toml.hpp"
#include "rewrite/text/utf8.hpp"

#include <cstdint>

namespace gistproxy::proxy {
namespace {

constexpr int max_depth = 32;  // inline tables and arrays inside each other

class reader {
 public:
  explicit reader(std::string_view text) : s_(text) {}

  std::optional<std::map<toml_path, std::string>> document() {
    toml_path table;
    bool skipping = false;  // inside an array of tables: not read
    for (;;) {
      blank_lines();
      if (at_end()) return std::move(out_);
      if (peek() == '[') {
        const bool array = s_.substr(pos_, 2) == "[[";
        pos_ += array ? 2 : 1;
        spaces();
        auto key = dotted_key();
        spaces();
        if (!key || !take(array ? "]]" : "]")) return std::nullopt;
        table = *key;
        skipping = array;
      } else {
        auto key = dotted_key();
        if (!key) return std::nullopt;
        toml_path path = table;
        path.insert(path.end(), key->begin(), key->end());
        spaces();
        if (!take("=")) return std::nullopt;
        spaces();
        if (!value(skipping ? nullptr : &path, 0)) return std::nullopt;
      }
      if (!line_end()) return std::nullopt;
    }
  }

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  bool take(std::string_view t) {
    if (s_.substr(pos_, t.size()) != t) return false;
    pos_ += t.size();
    return true;
  }
  void spaces() {
    while (peek() == ' ' || peek() == '\t') ++pos_;
  }
  void comment() {
    if (peek() != '#') return;
    while (!at_end() && peek() != '\n') ++pos_;
  }
  // Spaces, comments and newlines, as between array items and lines.
  void blank_lines() {
    for (;;) {
      spaces();
      comment();
      if (peek() == '\r' && peek(1) == '\n') ++pos_;
      if (peek() != '\n') return;
      ++pos_;
    }
  }
  bool line_end() {
    spaces();
    comment();
    if (at_end()) return true;
    if (peek() == '\r') ++pos_;
    return take("\n");
  }

  static bool bare(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }

  std::optional<toml_path> dotted_key() {
    toml_path key;
    for (;;) {
      spaces();
      std::string part;
      if (peek() == '"' || peek() == '\'') {
        auto q = quoted(false);
        if (!q) return std::nullopt;
        part = *q;
      } else {
        const auto start = pos_;
        while (bare(peek())) ++pos_;
        if (pos_ == start) return std::nullopt;
        part.assign(s_.substr(start, pos_ - start));
      }
      key.push_back(std::move(part));
      spaces();
      if (!take(".")) return key;
    }
  }

  // A value; its strings recorded under `path` (null: read and dropped).
  bool value(const toml_path* path, int depth) {
    if (depth > max_depth) return false;
    const char c = peek();
    if (c == '"' || c == '\'') {
      auto q = quoted(true);
      if (!q) return false;
      if (path) out_[*path] = std::move(*q);
      return true;
    }
    if (c == '{') return inline_table(path, depth);
    if (c == '[') return array(depth);
    return scalar();
  }

  // Newlines inside allowed, as TOML 1.1 does.
  bool inline_table(const toml_path* path, int depth) {
    ++pos_;
    blank_lines();
    if (take("}")) return true;
    for (;;) {
      blank_lines();
      auto key = dotted_key();
      if (!key) return false;
      blank_lines();
      if (!take("=")) return false;
      blank_lines();
      toml_path inner;
      if (path) {
        inner = *path;
        inner.insert(inner.end(), key->begin(), key->end());
      }
      if (!value(path ? &inner : nullptr, depth + 1)) return false;
      blank_lines();
      if (take("}")) return true;
      if (!take(",")) return false;
    }
  }

  bool array(int depth) {
    ++pos_;
    for (;;) {
      blank_lines();
      if (take("]")) return true;
      if (!value(nullptr, depth + 1)) return false;
      blank_lines();
      if (take("]")) return true;
      if (!take(",")) return false;
    }
  }

  // Numbers, booleans, dates and times: up to what ends a value.
  bool scalar() {
    const auto start = pos_;
    while (!at_end() && peek() != ',' && peek() != ']' && peek() != '}' && peek() != '#' && peek() != '\n' &&
           peek() != '\r')
      ++pos_;
    while (pos_ > start && (s_[pos_ - 1] == ' ' || s_[pos_ - 1] == '\t')) --pos_;
    return pos_ > start;
  }

  // One of the four string kinds (multi-line ones only as values).
  std::optional<std::string> quoted(bool multiline_allowed) {
    const char q = peek();
    const bool literal = q == '\'';
    const std::string three(3, q);
    const bool multiline = s_.substr(pos_, 3) == three;
    if (multiline && !multiline_allowed) return std::nullopt;
    pos_ += multiline ? 3 : 1;
    if (multiline && take("\r\n")) {
    } else if (multiline) {
      take("\n");
    }
    std::string out;
    for (;;) {
      if (at_end()) return std::nullopt;
      if (multiline ? s_.substr(pos_, 3) == three : peek() == q) {
        pos_ += multiline ? 3 : 1;
        // Up to two quotes right before the closing three belong to the string.
        for (int extra = 0; multiline && extra < 2 && peek() == q; ++extra, ++pos_) out += q;
        return out;
      }
      const char c = s_[pos_++];
      if (c == '\n' && !multiline) return std::nullopt;
      if (c != '\\' || literal) {
        out += c;
        continue;
      }
      if (!escape(out, multiline)) return std::nullopt;
    }
  }

  bool escape(std::string& out, bool multiline) {
    const char e = s_.size() > pos_ ? s_[pos_++] : '\0';
    switch (e) {
      case 'b': out += '\b'; return true;
      case 't': out += '\t'; return true;
      case 'n': out += '\n'; return true;
      case 'f': out += '\f'; return true;
      case 'r': out += '\r'; return true;
      case 'e': out += '\x1b'; return true;
      case '"': out += '"'; return true;
      case '\\': out += '\\'; return true;
      case 'u': return unicode(out, 4);
      case 'U': return unicode(out, 8);
      default: break;
    }
    if (!multiline) return false;
    // A line-ending backslash: the newline and the blanks after it go.
    --pos_;
    std::size_t p = pos_;
    while (p < s_.size() && (s_[p] == ' ' || s_[p] == '\t')) ++p;
    if (p < s_.size() && s_[p] == '\r') ++p;
    if (p >= s_.size() || s_[p] != '\n') return false;
    pos_ = p;
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
    return true;
  }

  bool unicode(std::string& out, int digits) {
    std::uint32_t cp = 0;
    for (int i = 0; i < digits; ++i) {
      const char h = peek();
      const int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (v < 0) return false;
      cp = cp * 16 + std::uint32_t(v);
      ++pos_;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    rewrite::text::append_utf8(out, cp);
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::map<toml_path, std::string> out_;
};

}  // namespace

std::optional<std::map<toml_path, std::string>> toml_strings(std::string_view text) { return reader(text).document(); }

}  // namespace gistproxy::proxy
