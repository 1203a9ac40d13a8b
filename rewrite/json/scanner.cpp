#include "rewrite/json/scanner.hpp"

#include "rewrite/json/walk_reuse.hpp"
#include "rewrite/text/utf8.hpp"

#include <algorithm>
#include <bitset>
#include <cstring>

namespace gistproxy::rewrite::json {
namespace {

constexpr std::size_t max_depth = 512;

int hex4(std::string_view s, std::size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    char c = s[k];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return -1;
  }
  return v;
}

}  // namespace

bool cursor::at_end() {
  skip_ws();
  return pos_ == doc_.size();
}

document::document(std::string_view bytes, reuse_scope* reuse)
    : std::string_view(bytes), reuse_(reuse && reuse->covers(bytes) ? reuse : nullptr) {}

bool cursor::skip_string_reused() {
  const std::size_t begin = pos_;
  auto* reuse = doc_.reuse();
  // Most strings are keys and short values: closed within a few bytes, they
  // are scanned, never looked up.
  const std::size_t short_end = std::min(doc_.size(), begin + walk_record::min_string);
  std::size_t end = detail::string_close(doc_.substr(0, short_end), begin, begin + 1);
  if (end != std::string_view::npos) {
    pos_ = end;
    return true;
  }
  // A long string the previous turn's body had at this offset, within the
  // bytes both bodies share, ends where it ended then (walk_reuse.hpp).
  if (auto known = reuse->string_end(begin); known && *known <= doc_.size()) {
    reuse->saw_string({begin, *known});  // the next turn asks again
    pos_ = *known;
    return true;
  }
  // No quote before short_end closed it: the search goes on from there
  // (escapes are counted back from each quote, across that boundary too).
  end = detail::string_close(doc_, begin, std::max(short_end, begin + 1));
  if (end == std::string_view::npos) return fail();
  pos_ = end;
  reuse->saw_string({begin, end});
  return true;
}

bool cursor::string_value(std::string& out) {
  auto raw = string_raw();
  if (!raw) return false;
  out.clear();
  if (!unescape(*raw, out)) return fail();
  return true;
}

std::optional<bool> cursor::boolean_value() {
  skip_ws();
  if (doc_.substr(pos_, 4) == "true") {
    pos_ += 4;
    return true;
  }
  if (doc_.substr(pos_, 5) == "false") {
    pos_ += 5;
    return false;
  }
  return fail(), std::nullopt;
}

std::optional<range> cursor::skip_scalar() {
  std::size_t begin = pos_;
  char c = doc_[pos_];
  if (c == '"') {
    if (!skip_string()) return std::nullopt;
    return range{begin, pos_};
  }
  if (c == 't' || c == 'f' || c == 'n') {
    std::string_view lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
    if (doc_.substr(pos_, lit.size()) != lit) return fail(), std::nullopt;
    pos_ += lit.size();
    return range{begin, pos_};
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    while (pos_ < doc_.size()) {
      char d = doc_[pos_];
      if ((d >= '0' && d <= '9') || d == '-' || d == '+' || d == '.' || d == 'e' || d == 'E') ++pos_;
      else break;
    }
    return range{begin, pos_};
  }
  return fail(), std::nullopt;
}

bool cursor::member_key() {
  skip_ws();
  if (pos_ >= doc_.size() || doc_[pos_] != '"' || !skip_string()) return fail();
  return expect(':');
}

std::optional<range> cursor::skip_value() {
  // Validates the grammar iteratively (a stack of open brackets, never
  // recursion), while strings, the bulk of the bytes, go at memchr speed.
  // The stack is a bit per open container (object or array): no allocation.
  skip_ws();
  std::size_t begin = pos_;
  if (pos_ >= doc_.size()) return fail(), std::nullopt;
  // A scalar (most values: numbers, ids, short strings) needs no stack.
  if (doc_[begin] != '{' && doc_[begin] != '[') return skip_scalar();
  // A container the previous turn's body had at this offset, within the
  // bytes both bodies share, ends where it ended then (walk_reuse.hpp).
  auto* reuse = doc_.reuse();
  if (reuse)
    if (auto known = reuse->container_end(begin); known && *known <= doc_.size()) {
      reuse->saw_container({begin, *known});  // the next turn asks again
      pos_ = *known;
      return range{begin, pos_};
    }
  std::bitset<max_depth> in_object;
  std::size_t depth = 0;
  for (;;) {
    // A value starts here.
    skip_ws();
    if (pos_ >= doc_.size()) return fail(), std::nullopt;
    char c = doc_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= max_depth) return fail(), std::nullopt;
      ++pos_;
      skip_ws();
      char close = c == '{' ? '}' : ']';
      if (pos_ < doc_.size() && doc_[pos_] == close) {
        ++pos_;
      } else {
        in_object[depth++] = c == '{';
        if (c == '{' && !member_key()) return std::nullopt;
        continue;
      }
    } else if (!skip_scalar()) {
      return std::nullopt;
    }
    // After a value: close containers or move to the next element.
    for (;;) {
      if (depth == 0) {
        if (reuse) reuse->saw_container({begin, pos_});
        return range{begin, pos_};
      }
      skip_ws();
      if (pos_ >= doc_.size()) return fail(), std::nullopt;
      char d = doc_[pos_++];
      if (d == ',') {
        if (in_object[depth - 1] && !member_key()) return std::nullopt;
        break;
      }
      if ((d == '}' && in_object[depth - 1]) || (d == ']' && !in_object[depth - 1])) {
        --depth;
        continue;
      }
      return fail(), std::nullopt;
    }
  }
}

bool unescape(std::string_view raw, std::string& out, bool* lossy, lone_surrogates lone) {
  out.reserve(out.size() + raw.size());
  std::size_t i = 0;
  while (i < raw.size()) {
    const void* hit = std::memchr(raw.data() + i, '\\', raw.size() - i);
    std::size_t j = hit ? std::size_t(static_cast<const char*>(hit) - raw.data()) : raw.size();
    out.append(raw.data() + i, j - i);
    if (j == raw.size()) break;
    if (j + 1 >= raw.size()) return false;
    char e = raw[j + 1];
    i = j + 2;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        int cp = hex4(raw, i);
        if (cp < 0) return false;
        i += 4;
        unsigned code = unsigned(cp);
        if (code >= 0xD800 && code <= 0xDBFF && i + 6 <= raw.size() && raw[i] == '\\' && raw[i + 1] == 'u') {
          int lo = hex4(raw, i + 2);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            code = 0x10000 + ((code - 0xD800) << 10) + (unsigned(lo) - 0xDC00);
            i += 6;
          }
        }
        // A lone surrogate cannot be UTF-8: U+FFFD like most decoders, or
        // (keep) its code unit's three bytes, which append_utf8 writes.
        if (code >= 0xD800 && code <= 0xDFFF && lone == lone_surrogates::replace) {
          code = 0xFFFD;
          if (lossy) *lossy = true;
        }
        text::append_utf8(out, code);
        break;
      }
      default: return false;
    }
  }
  return true;
}

void escape_into(std::string& out, std::string_view bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  out.reserve(out.size() + bytes.size() + bytes.size() / 16);
  std::size_t run = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(bytes.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
    }
  }
  out.append(bytes.data() + run, bytes.size() - run);
}

}  // namespace gistproxy::rewrite::json
