// A position-preserving JSON reader. It walks raw JSON text without building
// a DOM, so callers can find a value's exact byte range and splice around it:
// everything they do not change stays byte-identical (prompt caches key on
// exact prefixes), and multi-megabyte conversations are walked at memchr speed.
#pragma once

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite::json {

enum class kind { object, array, string, number, boolean, null, invalid };

// A slice of the document: [begin, end) byte offsets.
struct range {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
};

class reuse_scope;  // walk_reuse.hpp

namespace detail {

// Where the string opening at `begin` closes (the offset after its closing
// quote), searching for quotes from `from`; npos when it does not close. A
// quote closes the string unless an odd run of backslashes precedes it.
// memchr does the walking, which keeps long tool outputs cheap. Inline: every
// key and string value of every walk ends here.
inline std::size_t string_close(std::string_view doc, std::size_t begin, std::size_t from) {
  const char* base = doc.data();
  for (std::size_t i = from;;) {
    const void* hit = i < doc.size() ? std::memchr(base + i, '"', doc.size() - i) : nullptr;
    if (!hit) return std::string_view::npos;
    const std::size_t q = std::size_t(static_cast<const char*>(hit) - base);
    std::size_t backslashes = 0;
    while (q - backslashes > begin + 1 && base[q - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return q + 1;
    i = q + 1;
  }
}

}  // namespace detail

// The bytes a cursor walks, with the turn memory's reuse for them when the
// caller was handed one (walk_reuse.hpp). The reuse travels only where it is
// passed: plain bytes convert to a document without it, and a reuse made for
// another buffer is dropped (it answers for offsets in its own bytes only).
class document : public std::string_view {
 public:
  document(std::string_view bytes) : std::string_view(bytes) {}
  document(const std::string& bytes) : std::string_view(bytes) {}
  document(const char* bytes) : std::string_view(bytes) {}
  // Keeps `reuse` when it is null or covers `bytes` (the same first byte and
  // no more bytes than it was made for).
  document(std::string_view bytes, reuse_scope* reuse);

  reuse_scope* reuse() const { return reuse_; }
  // The first `end` bytes, with the same reuse (offsets do not move).
  document up_to(std::size_t end) const {
    document d(substr(0, end));
    d.reuse_ = reuse_;
    return d;
  }

 private:
  reuse_scope* reuse_ = nullptr;
};

class cursor {
 public:
  explicit cursor(document doc, std::size_t pos = 0) : doc_(doc), pos_(pos) {}

  bool failed() const { return failed_; }
  std::size_t pos() const { return pos_; }
  // The document walked, with its reuse: for a cursor over part of it.
  const document& doc() const { return doc_; }

  // Kind of the next value (after whitespace), without consuming it.
  // Inline, as expect() and string_raw(): each is asked at every member.
  kind peek() {
    skip_ws();
    if (pos_ >= doc_.size()) return kind::invalid;
    switch (doc_[pos_]) {
      case '{': return kind::object;
      case '[': return kind::array;
      case '"': return kind::string;
      case 't':
      case 'f': return kind::boolean;
      case 'n': return kind::null;
      default: {
        const char c = doc_[pos_];
        return (c == '-' || (c >= '0' && c <= '9')) ? kind::number : kind::invalid;
      }
    }
  }
  // Consumes one value of any kind; returns its range (nullopt on malformed input).
  std::optional<range> skip_value();
  // Consumes a string value; `raw` is the text between the quotes, still escaped.
  std::optional<std::string_view> string_raw() {
    skip_ws();
    if (pos_ >= doc_.size() || doc_[pos_] != '"') return fail(), std::nullopt;
    const std::size_t begin = pos_;
    if (!skip_string()) return std::nullopt;
    return doc_.substr(begin + 1, pos_ - begin - 2);
  }
  // Consumes a string value and unescapes it into out (exact UTF-8 bytes).
  bool string_value(std::string& out);
  // Consumes a literal true/false.
  std::optional<bool> boolean_value();

  // Walks an object: f(raw_key, cursor&) must consume the member's value
  // (or return false to stop with an error). Returns the object's range.
  template <class F>
  std::optional<range> object(F&& on_member);
  // Walks an array: f(index, cursor&) must consume the element's value.
  template <class F>
  std::optional<range> array(F&& on_element);

  // True when only whitespace is left.
  bool at_end();
  // Steps from here to `end`, over bytes the caller knows hold whole values
  // (where they ended when identical bytes were walked before: the turn
  // memory). Never backwards and never past the document: that fails.
  bool step_to(std::size_t end) {
    if (end < pos_ || end > doc_.size()) return fail();
    pos_ = end;
    return true;
  }

 private:
  // Inline: called between every two tokens, and most often at a token.
  void skip_ws() {
    while (pos_ < doc_.size()) {
      const char c = doc_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++pos_;
    }
  }
  bool expect(char c) {
    skip_ws();
    if (pos_ < doc_.size() && doc_[pos_] == c) {
      ++pos_;
      return true;
    }
    return fail();
  }
  // pos_ at the opening quote; leaves pos_ after the closing quote. Without
  // the turn memory (one pass, the usual case) inline.
  bool skip_string() {
    if (doc_.reuse()) return skip_string_reused();
    const auto end = detail::string_close(doc_, pos_, pos_ + 1);
    if (end == std::string_view::npos) return fail();
    pos_ = end;
    return true;
  }
  bool skip_string_reused();
  std::optional<range> skip_scalar();
  bool member_key();   // a "key" and its colon
  bool fail() {
    failed_ = true;
    return false;
  }

  document doc_;
  std::size_t pos_;
  bool failed_ = false;
};

// What unescape makes of a lone surrogate escape (\ud800 without its pair),
// which has no UTF-8 form: `replace` writes U+FFFD and sets *lossy (if
// given), so callers that must be lossless can refuse; `keep` writes the code
// unit's three bytes (ED A0..BF xx, as WTF-8 does), which checked::dump
// escapes back (text::is_utf8_with_surrogates accepts them).
enum class lone_surrogates { replace, keep };

// Unescapes the inside of a JSON string literal; false on a malformed escape.
bool unescape(std::string_view raw, std::string& out, bool* lossy = nullptr,
              lone_surrogates lone = lone_surrogates::replace);
// Appends bytes as the inside of a JSON string literal (no quotes). Escapes
// only what JSON requires plus control characters, so UTF-8 stays as is.
void escape_into(std::string& out, std::string_view bytes);

template <class F>
std::optional<range> cursor::object(F&& on_member) {
  skip_ws();
  std::size_t begin = pos_;
  if (!expect('{')) return std::nullopt;
  skip_ws();
  if (pos_ < doc_.size() && doc_[pos_] == '}') {
    ++pos_;
    return range{begin, pos_};
  }
  for (;;) {
    skip_ws();
    auto key = string_raw();
    if (!key) return std::nullopt;
    skip_ws();
    if (!expect(':')) return std::nullopt;
    if (!on_member(*key, *this) || failed_) {
      fail();
      return std::nullopt;
    }
    skip_ws();
    if (pos_ >= doc_.size()) return fail(), std::nullopt;
    char c = doc_[pos_++];
    if (c == '}') return range{begin, pos_};
    if (c != ',') return fail(), std::nullopt;
  }
}

template <class F>
std::optional<range> cursor::array(F&& on_element) {
  skip_ws();
  std::size_t begin = pos_;
  if (!expect('[')) return std::nullopt;
  skip_ws();
  if (pos_ < doc_.size() && doc_[pos_] == ']') {
    ++pos_;
    return range{begin, pos_};
  }
  for (std::size_t index = 0;; ++index) {
    if (!on_element(index, *this) || failed_) {
      fail();
      return std::nullopt;
    }
    skip_ws();
    if (pos_ >= doc_.size()) return fail(), std::nullopt;
    char c = doc_[pos_++];
    if (c == ']') return range{begin, pos_};
    if (c != ',') return fail(), std::nullopt;
  }
}

}  // namespace gistproxy::rewrite::json
