#include "rewrite/cost/model_family.hpp"

#include <algorithm>

namespace gistproxy::rewrite {
namespace {

// A version part has at most three digits: a longer run is a date or a
// snapshot ("-2025", "-20250514", "-0613"), which names a build, not a version.
constexpr std::size_t max_part_digits = 3;

bool digit(char c) { return c >= '0' && c <= '9'; }

std::size_t digits_at(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && digit(s[n])) ++n;
  return n;
}

// Families are words and dashes ("claude-opus-", "gpt-", "o"); anything else
// (a '/', '.' or ':' that base_model_name left) is no family this reads.
bool family_name(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_'; });
}

// Where a later version part may end: "4-8" ends at "-2026…", "@…", or the
// end; "4-8x" is no version part, so "8x" is read as the tier.
bool part_ends(std::string_view s, std::size_t n) {
  return n == s.size() || s[n] == '-' || s[n] == '.' || s[n] == '@' || s[n] == ':';
}

std::uint16_t number_of(std::string_view digits) {
  std::uint16_t n = 0;
  for (char c : digits) n = std::uint16_t(n * 10 + (c - '0'));
  return n;
}

// A segment that ends the tier: a date or snapshot number, a Bedrock model
// version ("v1:0") or a release stage. What follows it names a build of the
// same model, not another model line.
bool ends_tier(std::string_view seg) {
  if (seg.empty() || digits_at(seg) == seg.size()) return true;
  if (seg.size() >= 2 && seg[0] == 'v' && digit(seg[1])) return true;
  return seg == "latest" || seg == "preview" || seg == "exp";
}

// The tier in `rest` (what follows the version), and whether a snapshot or
// stage followed it.
void read_tier(std::string_view rest, model_version& v) {
  if (auto at = rest.find('@'); at != std::string_view::npos) {
    rest = rest.substr(0, at);
    v.snapshot = true;
  }
  std::size_t pos = 0, tier_end = 0;
  while (pos < rest.size()) {
    const std::size_t start = rest[pos] == '-' ? pos + 1 : pos;
    const std::size_t end = std::min(rest.find('-', start), rest.size());
    if (ends_tier(rest.substr(start, end - start))) {
      v.snapshot = true;
      break;
    }
    tier_end = pos = end;
  }
  v.tier = std::string(rest.substr(0, tier_end));
}

}  // namespace

std::optional<model_version> read_model_version(std::string_view name) {
  if (name.size() > model_name_limit) return std::nullopt;
  const auto first = std::find_if(name.begin(), name.end(), digit) - name.begin();
  model_version v;
  if (!family_name(name.substr(0, std::size_t(first)))) return std::nullopt;
  v.family = std::string(name.substr(0, std::size_t(first)));
  auto rest = name.substr(std::size_t(first));
  std::size_t n = digits_at(rest);
  if (n == 0 || n > max_part_digits) return std::nullopt;  // no digit, or a date ("gemini-exp-1206")
  v.number[0] = number_of(rest.substr(0, n));
  rest.remove_prefix(n);
  // Later parts: ".4" (gpt-5.4) or "-8" (claude-opus-4-8), never a date.
  for (std::size_t part = 1; part < v.number.size() && rest.size() >= 2; ++part) {
    if (rest[0] != '.' && rest[0] != '-') break;
    n = digits_at(rest.substr(1));
    if (n == 0 || n > max_part_digits || !part_ends(rest, n + 1)) break;
    v.number[part] = number_of(rest.substr(1, n));
    rest.remove_prefix(n + 1);
  }
  read_tier(rest, v);
  return v;
}

bool version_at_most(const model_version& a, const model_version& b) { return a.number <= b.number; }

}  // namespace gistproxy::rewrite
