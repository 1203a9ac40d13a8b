#include "rewrite/gist/digests.hpp"

#include <array>
#include <cctype>
#include <optional>
#include <vector>

#include "rewrite/json/scanner.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::size_t max_shown_line = 200;  // bytes of one problem line or item shown
constexpr std::size_t max_problem_lines = 10;  // the first 5 and the last 5

bool word_at(std::string_view line, std::size_t at, std::string_view word) {
  if (line.compare(at, word.size(), word) != 0) return false;
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  return (at == 0 || !is_word(line[at - 1])) && (at + word.size() >= line.size() || !is_word(line[at + word.size()]));
}

bool has_word(std::string_view line, std::string_view word) {
  for (auto at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1))
    if (word_at(line, at, word)) return true;
  return false;
}

constexpr std::array<std::string_view, 6> levels = {"FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

// The line's level: the first level word in it (WARNING counts as WARN), or -1.
int level_of(std::string_view line) {
  std::size_t best_at = std::string_view::npos;
  int best = -1;
  for (int i = 0; i < int(levels.size()); ++i) {
    for (auto at = line.find(levels[std::size_t(i)]); at != std::string_view::npos && at < best_at;
         at = line.find(levels[std::size_t(i)], at + 1)) {
      if (word_at(line, at, levels[std::size_t(i)]) || (i == 2 && word_at(line, at, "WARNING"))) {
        best_at = at;
        best = i;
        break;
      }
    }
  }
  return best;
}

bool is_problem(std::string_view line, int level) {
  if (level == 0 || level == 1) return true;
  for (std::string_view w : {"FAIL", "FAILED", "FAILURE", "PANIC", "CRITICAL", "Traceback", "Exception"})
    if (has_word(line, w)) return true;
  return line.find("error:") != std::string_view::npos || line.find("error[") != std::string_view::npos ||
         line.find("panic:") != std::string_view::npos;
}

std::string shown(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() <= max_shown_line) return std::string(line);
  return std::string(line.substr(0, text::utf8_floor(line, max_shown_line))) + " …";
}

}  // namespace

std::string log_digest(std::string_view bytes, std::size_t budget_bytes) {
  std::array<std::size_t, levels.size()> counts{};
  struct problem {
    std::size_t number;
    std::string_view line;
  };
  std::vector<problem> first, last;  // the first and the last few problem lines
  std::size_t problems = 0, number = 0;
  for (std::size_t start = 0; start < bytes.size();) {
    auto end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    const auto line = bytes.substr(start, end - start);
    start = end + 1;
    ++number;
    const int level = level_of(line);
    if (level >= 0) ++counts[std::size_t(level)];
    if (!is_problem(line, level)) continue;
    ++problems;
    if (first.size() < max_problem_lines / 2) {
      first.push_back({number, line});
    } else {
      if (last.size() == max_problem_lines / 2) last.erase(last.begin());
      last.push_back({number, line});
    }
  }
  std::string out;
  std::string level_text;
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (counts[i]) level_text += (level_text.empty() ? "" : ", ") + std::string(levels[i]) + " " + std::to_string(counts[i]);
  if (!level_text.empty()) out += "levels: " + level_text + "\n";
  if (problems) {
    out += "problem lines (" + std::to_string(first.size() + last.size()) + " of " + std::to_string(problems) + "):\n";
    for (const auto* part : {&first, &last})
      for (const auto& p : *part) {
        auto line = std::to_string(p.number) + ": " + shown(p.line) + "\n";
        // The levels and the header count too: never more than the budget.
        if (out.size() + line.size() > budget_bytes) return out.size() <= budget_bytes ? out : std::string();
        out += line;
      }
  }
  return out.size() <= budget_bytes ? out : std::string();
}

namespace {

std::string_view kind_word(json::kind k) {
  switch (k) {
    case json::kind::object: return "object";
    case json::kind::array: return "array";
    case json::kind::string: return "string";
    case json::kind::number: return "number";
    case json::kind::boolean: return "boolean";
    case json::kind::null: return "null";
    default: return "invalid";
  }
}

// A key as the digest shows it (raw, as written in the output): its first 40
// bytes, never cut inside a UTF-8 sequence (the digest goes into the
// forwarded body) nor inside an escape.
std::string shown_key(std::string_view key) { return std::string(key.substr(0, text::raw_string_floor(key, 40))); }

// "{a: string, b: number, ...}" of an object's members (the first 24 keys).
std::string keys_of(std::string_view doc, std::size_t at) {
  json::cursor c(doc, at);
  std::string out;
  std::size_t n = 0;
  bool ok = c.object([&](std::string_view key, json::cursor& v) {
                if (n++ < 24) out += (out.empty() ? "" : ", ") + shown_key(key) + ": " + std::string(kind_word(v.peek()));
                return v.skip_value().has_value();
              }).has_value();
  if (!ok) return {};
  if (n > 24) out += ", … (" + std::to_string(n) + " keys)";
  return "{" + out + "}";
}

}  // namespace

std::string json_digest(std::string_view bytes, std::size_t budget_bytes) {
  json::cursor c(bytes);
  const auto top = c.peek();
  std::string out;
  if (top == json::kind::array) {
    std::size_t count = 0;
    std::optional<json::range> first_item, last_item;
    json::kind item_kind = json::kind::invalid;
    bool mixed = false;
    bool ok = c.array([&](std::size_t, json::cursor& item) {
                  const auto k = item.peek();
                  if (count == 0) item_kind = k;
                  else mixed |= k != item_kind;
                  auto r = item.skip_value();
                  if (!r) return false;
                  if (count == 0) first_item = r;
                  last_item = r;
                  ++count;
                  return true;
                }).has_value();
    if (!ok) return {};
    out = "shape: array of " + std::to_string(count) + (mixed ? " mixed items" : " " + std::string(kind_word(item_kind)) + "s");
    if (!mixed && item_kind == json::kind::object && first_item) out += " " + keys_of(bytes, first_item->begin);
    out += "\n";
    if (first_item) out += "first: " + shown(bytes.substr(first_item->begin, first_item->size())) + "\n";
    if (last_item && count > 1) out += "last: " + shown(bytes.substr(last_item->begin, last_item->size())) + "\n";
  } else if (top == json::kind::object) {
    std::string members;
    std::size_t n = 0;
    bool ok = c.object([&](std::string_view key, json::cursor& v) {
                  const auto k = v.peek();
                  std::string what(kind_word(k));
                  if (k == json::kind::array) {
                    std::size_t items = 0;
                    if (!v.array([&](std::size_t, json::cursor& e) { ++items; return e.skip_value().has_value(); })) return false;
                    what = "array of " + std::to_string(items);
                  } else if (!v.skip_value()) {
                    return false;
                  }
                  if (n++ < 24) members += (members.empty() ? "" : ", ") + shown_key(key) + ": " + what;
                  return true;
                }).has_value();
    if (!ok) return {};
    if (n > 24) members += ", … (" + std::to_string(n) + " keys)";
    out = "shape: object {" + members + "}\n";
  } else {
    return {};
  }
  if (out.size() > budget_bytes) {
    if (budget_bytes < 8) return {};
    out.resize(text::utf8_floor(out, budget_bytes - 4));
    out += "…\n";
  }
  return out;
}

}  // namespace gistproxy::rewrite
