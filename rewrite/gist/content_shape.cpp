#include "rewrite/gist/content_shape.hpp"

#include <algorithm>
#include <cstring>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::size_t sample_bytes = 64 * 1024;  // classification looks at the start only

bool has_level_word(std::string_view line) {
  for (std::string_view w : {"ERROR", "WARN", "INFO", "DEBUG", "TRACE", "FATAL", "FAILED", "PASSED", "Traceback",
                             "error:", "warning:", "[ERR", "panic:"})
    if (line.find(w) != std::string_view::npos) return true;
  return false;
}

bool has_timestamp(std::string_view line) {
  // 12:34:56 or 2024-01-02 near the start of the line.
  auto head = line.substr(0, 40);
  for (std::size_t i = 0; i + 8 <= head.size(); ++i) {
    auto d = [&](std::size_t k) { return head[i + k] >= '0' && head[i + k] <= '9'; };
    if (d(0) && d(1) && head[i + 2] == ':' && d(3) && d(4) && head[i + 5] == ':' && d(6) && d(7)) return true;
    if (i + 10 <= head.size() && d(0) && d(1) && d(2) && d(3) && head[i + 4] == '-' && d(5) && d(6) &&
        head[i + 7] == '-' && d(8) && d(9))
      return true;
  }
  return false;
}

bool looks_like_code(std::string_view line) {
  auto t = line;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\r')) t.remove_suffix(1);
  if (t.empty()) return false;
  char last = t.back();
  if (last == ';' || last == '{' || last == '}' || last == ')' || last == ':' || last == ',') return true;
  auto s = t.substr(t.find_first_not_of(" \t") == std::string_view::npos ? 0 : t.find_first_not_of(" \t"));
  for (std::string_view k : {"def ", "class ", "import ", "from ", "#include", "function ", "const ", "let ", "var ",
                             "fn ", "pub ", "package ", "func ", "return", "if (", "for (", "//", "#!", "struct "})
    if (s.rfind(k, 0) == 0) return true;
  return false;
}

}  // namespace

std::string_view kind_name(content_kind k) {
  switch (k) {
    case content_kind::json: return "json";
    case content_kind::log: return "log";
    case content_kind::source: return "source";
    case content_kind::text: return "text";
  }
  return "text";
}

content_kind classify_content(std::string_view bytes) {
  auto first = bytes.find_first_not_of(" \t\r\n");
  auto last = bytes.find_last_not_of(" \t\r\n");
  if (first != std::string_view::npos && (bytes[first] == '{' || bytes[first] == '[') &&
      (bytes[last] == '}' || bytes[last] == ']')) {
    json::cursor c(bytes);
    if (c.skip_value() && c.at_end()) return content_kind::json;
  }
  auto sample = bytes.substr(0, sample_bytes);
  std::size_t lines = 0, log_lines = 0, code_lines = 0;
  std::size_t pos = 0;
  while (pos < sample.size() && lines < 400) {
    auto nl = sample.find('\n', pos);
    auto line = sample.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? sample.size() : nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++lines;
    if (has_timestamp(line) || has_level_word(line)) ++log_lines;
    else if (looks_like_code(line)) ++code_lines;
  }
  if (lines >= 3 && log_lines * 10 >= lines * 3) return content_kind::log;
  if (lines >= 3 && code_lines * 10 >= lines * 4) return content_kind::source;
  return content_kind::text;
}

std::uint64_t count_code_points(std::string_view bytes) {
  std::uint64_t n = 0;
  for (unsigned char c : bytes) n += (c & 0xC0) != 0x80;
  return n;
}

std::uint64_t count_lines(std::string_view bytes) {
  if (bytes.empty()) return 0;
  auto n = std::uint64_t(std::count(bytes.begin(), bytes.end(), '\n'));
  return bytes.back() == '\n' ? n : n + 1;
}

std::uint64_t char_ratio_estimator::estimate(std::string_view bytes, content_kind kind) const {
  auto chars = count_code_points(bytes);
  std::uint64_t per_token = kind == content_kind::json ? 2 : 4;
  return (chars + per_token - 1) / per_token;
}

content_shape shape_of(std::string_view bytes, const token_estimator& estimator) {
  content_shape s;
  s.kind = classify_content(bytes);
  s.bytes = bytes.size();
  s.lines = count_lines(bytes);
  s.chars = count_code_points(bytes);
  s.tokens = estimator.estimate(bytes, s.kind);
  return s;
}

}  // namespace gistproxy::rewrite
