// Source outlines and search-hit summaries (digests.hpp). One pass over the
// lines, no regex, no allocation per line beyond what is shown.
#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include "rewrite/gist/digests.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::size_t max_shown = 160;        // bytes of one outline line
constexpr std::size_t scan_line_limit = 4096;  // longer lines are never definitions

template <typename F>
void for_each_line(std::string_view bytes, F&& f) {
  std::size_t number = 0;
  for (std::size_t start = 0; start < bytes.size();) {
    auto end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    auto line = bytes.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    if (!f(++number, line)) return;
  }
}

// A tool that numbers the lines it shows ("  12→", "12\t", "12: ", "12| ")
// puts the number before the code: the outline reads what follows.
std::string_view without_line_number(std::string_view line) {
  auto s = line.substr(std::min(line.find_first_not_of(' '), line.size()));
  std::size_t digits = 0;
  while (digits < s.size() && digits < 9 && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (!digits) return line;
  auto rest = s.substr(digits);
  for (std::string_view sep : {"\xe2\x86\x92", "\t", ": ", "| ", ":"})
    if (rest.starts_with(sep)) return rest.substr(sep.size());
  return line;
}

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> words) {
  for (auto w : words)
    if (s.starts_with(w)) return true;
  return false;
}

// A line that starts a definition: a keyword many languages share, or a C-
// family function definition at the left margin ("type name(args) {").
bool is_definition(std::string_view code) {
  const auto indent = code.find_first_not_of(" \t");
  if (indent == std::string_view::npos || indent > 8) return false;
  auto s = code.substr(indent);
  if (s == "namespace {") return false;  // anonymous: says nothing
  if (starts_with_any(s, {"def ", "async def ", "class ", "struct ", "enum ", "union ", "interface ", "trait ", "impl ",
                          "impl<", "fn ", "pub fn ", "pub(crate) fn ", "pub struct ", "pub enum ", "pub trait ",
                          "async fn ", "pub async fn ", "func ", "function ", "async function ", "export function ",
                          "export async function ", "export class ", "export default ", "export interface ",
                          "export type ", "export const ", "namespace ", "module ", "type ", "template <", "template<"}))
    return true;
  if (indent != 0) return false;
  // C, C++, Java, C#: "ret name(...)" opening a body, at the left margin.
  if (starts_with_any(s, {"if", "for", "while", "switch", "return", "else", "do ", "case ", "#", "//", "/*", "*", "}"}))
    return false;
  const auto paren = s.find('(');
  if (paren == std::string_view::npos || paren == 0) return false;
  const auto before = s.substr(0, paren);
  if (before.find(' ') == std::string_view::npos && before.find("::") == std::string_view::npos) return false;
  if (before.find('=') != std::string_view::npos) return false;
  // A body opens on the line (a one-line definition too), or the line ends
  // the signature; a ';' before any '{' is a declaration or a statement.
  const auto brace = s.find('{', paren);
  if (s.substr(0, brace).find(';') != std::string_view::npos) return false;
  return brace != std::string_view::npos || s.back() == ')' || s.ends_with(") const") || s.ends_with(") override");
}

std::string shown(std::string_view line) {
  auto s = line.substr(std::min(line.find_first_not_of(" \t"), line.size()));
  if (s.size() <= max_shown) return std::string(s);
  return std::string(s.substr(0, text::utf8_floor(s, max_shown))) + " …";
}

// "path:12:text" or "path:12-text" (grep -n, rg -n), or "path:text": the
// path as a view, empty when the line is not a hit.
std::string_view hit_path(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 300) return {};
  const auto path = line.substr(0, colon);
  if (path.find_first_of(" \t\"'") != std::string_view::npos) return {};
  if (path.find('/') == std::string_view::npos && path.find('.') == std::string_view::npos) return {};
  auto rest = line.substr(colon + 1);
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (!digits || digits >= rest.size() || (rest[digits] != ':' && rest[digits] != '-')) return {};
  return path;
}

}  // namespace

std::string source_digest(std::string_view bytes, std::size_t budget_bytes) {
  std::vector<std::string> entries;
  std::size_t definitions = 0, used = 0;
  for_each_line(bytes, [&](std::size_t number, std::string_view line) {
    if (line.size() > scan_line_limit) return true;
    const auto code = without_line_number(line);
    if (!is_definition(code)) return true;
    ++definitions;
    auto entry = std::to_string(number) + ": " + shown(code) + "\n";
    if (used + entry.size() <= budget_bytes) {
      used += entry.size();
      entries.push_back(std::move(entry));
    }
    return true;
  });
  if (definitions < 2) return {};
  // The header and the "… N more" line are sized exactly (their numbers are
  // known only now): entries give way from the end until all of it fits.
  const std::string header = "outline (" + std::to_string(definitions) + " definitions, with their line numbers):\n";
  const auto more_line = [&] {
    return entries.size() < definitions ? "… " + std::to_string(definitions - entries.size()) + " more\n" : std::string();
  };
  while (!entries.empty() && header.size() + used + more_line().size() > budget_bytes) {
    used -= entries.back().size();
    entries.pop_back();
  }
  std::string out = header;
  for (const auto& e : entries) out += e;
  out += more_line();
  return out.size() <= budget_bytes ? out : std::string();
}

std::string search_hits_digest(std::string_view bytes, std::size_t budget_bytes) {
  constexpr std::size_t max_files = 4096;  // bounded map; files past it are counted, not named
  std::map<std::string_view, std::size_t> per_file;
  std::vector<std::string_view> order;  // first appearance
  // Lines from the first hit to the last: a tool's header ("Exit code: 0",
  // "Output:") and footer do not count against the hits.
  std::size_t lines_since_first = 0, lines_at_last = 0, hits = 0, unnamed = 0;
  for_each_line(bytes, [&](std::size_t, std::string_view line) {
    if (line.empty() || line == "--") return true;
    if (hits) ++lines_since_first;
    const auto path = hit_path(line);
    if (path.empty()) return true;
    if (!hits) lines_since_first = 1;
    lines_at_last = lines_since_first;
    ++hits;
    auto it = per_file.find(path);
    if (it != per_file.end()) {
      ++it->second;
    } else if (per_file.size() < max_files) {
      per_file.emplace(path, 1);
      order.push_back(path);
    } else {
      ++unnamed;
    }
    return true;
  });
  // Search output: nearly every line a hit, in more than one place.
  if (hits < 3 || hits * 10 < lines_at_last * 8 || per_file.size() < 2) return {};
  std::stable_sort(order.begin(), order.end(),
                   [&](std::string_view a, std::string_view b) { return per_file[a] > per_file[b]; });
  std::string out = "search hits: " + std::to_string(hits) + " in " + std::to_string(per_file.size() + (unnamed ? 1 : 0)) +
                    (unnamed ? "+" : "") + " files\n";
  std::size_t named = 0;
  for (auto path : order) {
    auto entry = std::to_string(per_file[path]) + "  " + shown(path) + "\n";
    if (out.size() + entry.size() + 32 > budget_bytes) break;
    out += entry;
    ++named;
  }
  if (named < order.size()) out += "… " + std::to_string(order.size() - named) + " more files\n";
  return out.size() <= budget_bytes ? out : std::string();
}

}  // namespace gistproxy::rewrite
