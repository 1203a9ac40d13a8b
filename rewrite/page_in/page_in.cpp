#include "rewrite/page_in/page_in.hpp"
#include "rewrite/page_in/line_query.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite {
namespace {

struct line_index {
  std::vector<std::size_t> starts;  // byte offset of each line
  explicit line_index(std::string_view s) {
    if (s.empty()) return;
    starts.push_back(0);
    for (std::size_t i = s.find('\n'); i != std::string_view::npos && i + 1 < s.size(); i = s.find('\n', i + 1))
      starts.push_back(i + 1);
  }
  std::size_t count() const { return starts.size(); }
  std::string_view line(std::string_view s, std::size_t i) const {  // 0-based, without '\n'
    std::size_t b = starts[i], e = i + 1 < starts.size() ? starts[i + 1] - 1 : s.size();
    if (e > b && s[e - 1] == '\n') --e;
    return s.substr(b, e - b);
  }
};

// How often (in lines) a scan asks whether its time is up.
constexpr std::size_t deadline_check_lines = 1024;

std::string error_text(blob_error e, std::string_view handle, std::string_view detail) {
  std::string h(handle);
  switch (e) {
    case blob_error::not_found:
      return "read_blob error: no stored output has handle \"" + h + "\" for this API key. Check the handle "
             "against the reference in the conversation; the output may belong to another key.";
    case blob_error::ambiguous:
      return "read_blob error: handle \"" + h + "\" is ambiguous; use more characters of it.";
    case blob_error::expired:
      return "read_blob error: the output \"" + h + "\" expired from the store and cannot be read any more. "
             "Re-run the tool that produced it if you need it.";
    case blob_error::integrity:
      return "read_blob error: the stored output \"" + h + "\" failed its integrity check (its bytes no longer "
             "match their SHA-256), so it is not returned. Re-run the tool that produced it.";
    case blob_error::too_large:
      return "read_blob error: the stored output \"" + h + "\" is too large to read.";
    case blob_error::io:
      // A shared store that cannot be reached: the reference may be sound,
      // but nothing here can follow it now. The model is told so, by handle.
      return "read_blob error: the blob store holding \"" + h + "\" could not be reached or read (" + std::string(detail) +
             "), so this output cannot be read now. Try again later, or re-run the tool that produced it.";
    default:
      return "read_blob error: the store could not be read (" + std::string(detail) + "). Try again later.";
  }
}

// Appends "N: line" (':' for a match or range line, '-' for context). A line
// longer than the room left is cut on a character boundary and says where it
// continues (a byte offset for read_blob's `offset`). Returns false when
// nothing more fits.
bool append_numbered(std::string& out, std::size_t number, char sep, std::string_view line, std::size_t line_offset,
                     std::uint64_t page_max, std::uint64_t& bytes_returned) {
  std::string head = std::to_string(number) + sep + ' ';
  if (out.size() + head.size() + line.size() + 1 <= page_max) {
    out += head;
    out += line;
    out += '\n';
    bytes_returned += line.size() + 1;
    return true;
  }
  const std::size_t room = page_max > out.size() + head.size() ? page_max - out.size() - head.size() : 0;
  const std::size_t shown = text::utf8_floor(line, std::min(room, line.size()));
  if (shown == 0 && !out.empty()) return false;
  out += head;
  out += line.substr(0, shown);
  out += "\n[read_blob: line " + std::to_string(number) + " is " + std::to_string(line.size()) + " bytes, longer than a page; " +
         "read it on with offset=" + std::to_string(line_offset + shown) + "]\n";
  bytes_returned += shown;
  return false;
}

// Full mode: the exact bytes, or one page of them from `offset`, cut after a
// newline where one falls in the page, else on a character boundary.
page_result page_bytes(page_result r, std::string_view bytes, std::uint64_t offset, const page_limits& limits) {
  if (offset == 0 && bytes.size() <= limits.page_max_bytes) {
    r.text = std::string(bytes);  // the exact bytes, nothing added
    r.bytes_returned = bytes.size();
    r.ok = true;
    return r;
  }
  if (offset > bytes.size()) {
    r.text = "read_blob error: offset " + std::to_string(offset) + " is past the end; the output has " +
             std::to_string(bytes.size()) + " bytes.";
    return r;
  }
  std::size_t from = std::size_t(offset);
  while (from < bytes.size() && (static_cast<unsigned char>(bytes[from]) & 0xC0) == 0x80) ++from;  // whole characters
  std::size_t end = bytes.size();
  if (bytes.size() - from > limits.page_max_bytes) {
    auto window = bytes.substr(from, limits.page_max_bytes);
    auto nl = window.rfind('\n');
    end = nl != std::string_view::npos ? from + nl + 1 : text::utf8_floor(bytes, from + limits.page_max_bytes);
    if (end <= from) end = text::utf8_floor(bytes, from + std::max<std::uint64_t>(limits.page_max_bytes, 4));
  }
  const std::size_t first_line = std::size_t(std::count(bytes.begin(), bytes.begin() + from, '\n')) + 1;
  const std::size_t last_line = first_line + std::size_t(std::count(bytes.begin() + from, bytes.begin() + end, '\n')) -
                                (end > from && bytes[end - 1] == '\n' ? 1 : 0);
  r.text = std::string(bytes.substr(from, end - from));
  r.bytes_returned = end - from;
  r.ok = true;
  if (from == 0 && end == bytes.size()) return r;
  r.text += "\n[read_blob: bytes " + std::to_string(from) + "-" + std::to_string(end) + " of " + std::to_string(bytes.size()) +
            " (lines " + std::to_string(first_line) + "-" + std::to_string(last_line) + ").";
  if (end < bytes.size()) {
    r.text += " Read on with offset=" + std::to_string(end);
    if (bytes[end - 1] == '\n') r.text += " or start_line=" + std::to_string(last_line + 1);
    r.text += ", or search with pattern=.";
  }
  r.text += "]";
  return r;
}

page_result page_range(page_result r, std::string_view bytes, const page_request& req, const page_limits& limits) {
  line_index lines(bytes);
  const std::size_t total = lines.count();
  std::int64_t first = std::max<std::int64_t>(1, req.start_line.value_or(1));
  std::int64_t last = std::min<std::int64_t>(std::int64_t(total), req.end_line.value_or(std::int64_t(total)));
  if (total == 0 || first > std::int64_t(total) || first > last) {
    r.text = "read_blob error: lines " + std::to_string(first) + "-" + std::to_string(last) +
             " are out of range; the output has " + std::to_string(total) + " lines.";
    return r;
  }
  std::string out;
  std::int64_t shown_last = first - 1;
  for (std::int64_t i = first; i <= last; ++i) {
    const auto index = std::size_t(i - 1);
    const bool whole = append_numbered(out, std::size_t(i), ':', lines.line(bytes, index), lines.starts[index],
                                       limits.page_max_bytes, r.bytes_returned);
    if (!whole) break;
    shown_last = i;
  }
  r.text = "[lines " + std::to_string(first) + "-" + std::to_string(std::max(shown_last, first)) + " of " +
           std::to_string(total) + "]\n" + out;
  if (shown_last < last)
    r.text += "[read_blob: page limit reached; continue with start_line=" + std::to_string(shown_last + 1) + "]";
  r.ok = true;
  return r;
}

// RE2: linear time in the text, bounded memory, no recursion on the pattern;
// patterns it cannot run in linear time (backreferences) fail to compile.
std::unique_ptr<RE2> compile_pattern(const std::string& pattern, const page_limits& limits, std::string& error) {
  if (pattern.size() > limits.max_pattern_bytes) {
    error = "read_blob error: the pattern is " + std::to_string(pattern.size()) + " bytes; at most " +
            std::to_string(limits.max_pattern_bytes) + " are accepted. Use a shorter pattern.";
    return nullptr;
  }
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(std::int64_t(limits.regex_max_mem));
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok()) {
    error = "read_blob error: bad pattern: " + re->error() +
            " (RE2 syntax: no backreferences or lookaround; use a plain substring or character classes).";
    return nullptr;
  }
  return re;
}

page_result page_pattern(page_result r, std::string_view bytes, const page_request& req, const page_limits& limits) {
  std::string error;
  auto re = compile_pattern(*req.pattern, limits, error);
  if (!re) {
    r.text = std::move(error);
    return r;
  }
  line_index lines(bytes);
  const std::size_t total = lines.count();
  const std::size_t context = std::size_t(std::clamp<std::int64_t>(req.context_lines, 0, std::int64_t(limits.max_context_lines)));
  std::vector<std::size_t> matches;
  std::size_t match_count = 0, scanned = 0;
  for (; scanned < total; ++scanned) {
    if (scanned % deadline_check_lines == 0 && scanned > 0 && limits.out_of_time && limits.out_of_time()) break;
    auto line = lines.line(bytes, scanned);
    if (RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *re)) {
      ++match_count;
      if (matches.size() < limits.max_matches) matches.push_back(scanned);
    }
  }
  std::string out;
  std::size_t printed_until = 0;  // next line index not yet printed
  bool truncated = false;
  for (std::size_t m : matches) {
    std::size_t from = m >= context ? m - context : 0, to = std::min(total - 1, m + context);
    if (from > printed_until && !out.empty()) out += "--\n";
    for (std::size_t i = std::max(from, printed_until); i <= to && !truncated; ++i)
      truncated = !append_numbered(out, i + 1, i == m ? ':' : '-', lines.line(bytes, i), lines.starts[i],
                                   limits.page_max_bytes, r.bytes_returned);
    if (truncated) break;
    printed_until = to + 1;
  }
  // The pattern is the model's: quoted back as JSON would quote it.
  std::string quoted = checked::dump(nlohmann::json(text::is_valid_utf8(*req.pattern) ? *req.pattern : std::string("?")));
  r.text = "[" + std::to_string(match_count) + " of " + std::to_string(scanned < total ? scanned : total) +
           " lines match " + quoted;
  if (matches.size() < match_count || truncated) r.text += "; showing the first " + std::to_string(matches.size());
  if (scanned < total)
    r.text += "; search stopped at line " + std::to_string(scanned) + " of " + std::to_string(total) +
              " (time budget): narrow it with start_line/end_line";
  r.text += "]\n" + out;
  r.ok = true;
  return r;
}

// Query mode: the best lines for the query's words (BM25), in line order,
// numbered. Linear in the blob; bounded by max_query_lines and the page.
page_result page_query(page_result r, std::string_view bytes, const page_request& req, const page_limits& limits) {
  if (req.query->size() > limits.max_query_bytes) {
    r.text = "read_blob error: the query is longer than " + std::to_string(limits.max_query_bytes) + " bytes.";
    return r;
  }
  auto ranked = rank_lines(bytes, *req.query, limits.max_query_lines, limits.out_of_time);
  if (ranked.terms.empty()) {
    r.text = "read_blob error: the query has no words to look for.";
    return r;
  }
  std::string words;
  for (const auto& t : ranked.terms) words += (words.empty() ? "" : " ") + t;
  if (ranked.best.empty()) {
    r.text = "[query \"" + words + "\": no line of the " + std::to_string(ranked.lines) +
             " holds any of these words; try other words or pattern=]";
    r.ok = true;
    return r;
  }
  std::string out;
  for (const auto& line : ranked.best)
    if (!append_numbered(out, line.number, ':', line.text, line.offset, limits.page_max_bytes, r.bytes_returned)) break;
  r.text = "[query \"" + words + "\": best " + std::to_string(ranked.best.size()) + " of " +
           std::to_string(ranked.matching) + " matching lines (of " + std::to_string(ranked.lines) + "), by BM25, in line order" +
           (ranked.out_of_time ? "; stopped early (time budget)" : "") + "]\n" + out;
  r.ok = true;
  return r;
}

// A JSON integer, a float (truncated) or a numeric string; clamped to a
// range where arithmetic on it cannot overflow.
std::optional<std::int64_t> integer_argument(const nlohmann::json& j, const char* key, std::string& error) {
  constexpr std::int64_t bound = std::int64_t(1) << 53;
  const auto& v = checked::member(j, key);
  if (v.is_null()) return std::nullopt;
  if (auto i = checked::integer_at(j, key)) return std::clamp(*i, -bound, bound);
  if (v.is_number_float() && std::isfinite(v.get<double>()))
    return std::int64_t(std::clamp(v.get<double>(), -double(bound), double(bound)));
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    try {
      std::size_t used = 0;
      auto n = std::stoll(s, &used);
      if (used == s.size()) return std::clamp<std::int64_t>(n, -bound, bound);
    } catch (const std::exception&) {
    }
  }
  error = std::string("read_blob error: \"") + key + "\" must be an integer.";
  return std::nullopt;
}

}  // namespace

std::string_view page_mode_name(page_mode m) {
  switch (m) {
    case page_mode::full: return "full";
    case page_mode::pattern: return "pattern";
    case page_mode::range: return "range";
    case page_mode::query: return "query";
    case page_mode::raw: return "raw";
  }
  return "full";
}

std::optional<page_request> parse_page_request(std::string_view arguments_json, std::string& error) {
  auto j = json::parse_checked(arguments_json);
  if (!j.is_object()) {
    error = "read_blob error: arguments must be a JSON object like {\"handle\": \"…\"}.";
    return std::nullopt;
  }
  page_request r;
  const auto& handle = checked::member(j, "handle");
  if (!handle.is_string()) {
    error = "read_blob error: the \"handle\" argument (a string) is required.";
    return std::nullopt;
  }
  r.handle = handle.get<std::string>();
  for (auto& ch : r.handle) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (auto p = checked::string_at(j, "pattern"); !p.empty()) r.pattern = std::move(p);
  if (auto q = checked::string_at(j, "query"); !q.empty()) r.query = std::move(q);
  r.start_line = integer_argument(j, "start_line", error);
  r.end_line = integer_argument(j, "end_line", error);
  r.offset = integer_argument(j, "offset", error);
  if (auto c = integer_argument(j, "context_lines", error)) r.context_lines = *c;
  if (!error.empty()) return std::nullopt;
  return r;
}

page_result page_in(blob_store& store, std::string_view tenant, const page_request& req, const page_limits& limits) {
  page_result r;
  r.mode = req.pattern                        ? page_mode::pattern
           : req.query                        ? page_mode::query
           : (req.start_line || req.end_line) ? page_mode::range
                                              : page_mode::full;
  auto got = store.get(tenant, req.handle);
  if (got.error != blob_error::none) {
    r.error = got.error;
    r.integrity_ok = got.error != blob_error::integrity;
    r.text = error_text(got.error, req.handle, got.message);
    // A blob that failed its re-check was found: name it (spans, report), so
    // operators can find and verify it. Unknown handles stay unnamed.
    if (got.error == blob_error::integrity) {
      r.hash = got.meta.hash.empty() ? req.handle : got.meta.hash;
      r.tool_name = got.meta.tool_name;
    }
    return r;
  }
  r.hash = got.meta.hash;
  r.tool_name = got.meta.tool_name;
  // Only UTF-8 text travels exactly inside the API's JSON. Binary blobs
  // (images) are paged as their base64 text, which decodes to the exact
  // bytes; the offload engine keeps non-UTF-8 text outputs inline.
  std::string encoded;
  std::string_view bytes = got.bytes;
  if (!text::is_valid_utf8(bytes)) {
    encoded = base64_encode(bytes);
    bytes = encoded;
    r.blob_bytes = bytes.size();
    if (r.mode == page_mode::full && std::max<std::int64_t>(0, req.offset.value_or(0)) == 0) {
      auto page = page_bytes(std::move(r), bytes, 0, limits);
      page.text = "[read_blob: " + (got.meta.kind.empty() ? std::string("binary") : got.meta.kind) + ", " +
                  std::to_string(got.bytes.size()) + " bytes, as base64]\n" + page.text;
      return page;
    }
  }
  r.blob_bytes = bytes.size();
  switch (r.mode) {
    case page_mode::raw:  // never chosen above
    case page_mode::full: return page_bytes(std::move(r), bytes, std::uint64_t(std::max<std::int64_t>(0, req.offset.value_or(0))), limits);
    case page_mode::range: return page_range(std::move(r), bytes, req, limits);
    case page_mode::pattern: return page_pattern(std::move(r), bytes, req, limits);
    case page_mode::query: return page_query(std::move(r), bytes, req, limits);
  }
  return r;
}

page_result read_raw(blob_store& store, std::string_view tenant, std::string_view handle) {
  page_result r;
  r.mode = page_mode::raw;
  auto got = store.get(tenant, handle);
  if (got.error != blob_error::none) {
    r.error = got.error;
    r.integrity_ok = got.error != blob_error::integrity;
    r.text = error_text(got.error, handle, got.message);
    if (got.error == blob_error::integrity) r.hash = got.meta.hash.empty() ? std::string(handle) : got.meta.hash;
    return r;
  }
  r.ok = true;
  r.hash = got.meta.hash;
  r.tool_name = got.meta.tool_name;
  r.bytes_returned = got.bytes.size();
  r.text = std::move(got.bytes);
  return r;
}

}  // namespace gistproxy::rewrite
