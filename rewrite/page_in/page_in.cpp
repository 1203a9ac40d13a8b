#include "rewrite/page_in/page_in.hpp"

#include <regex.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

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

void append_numbered(std::string& out, std::size_t number, char sep, std::string_view line) {
  out += std::to_string(number);
  out += sep;
  out += ' ';
  out += line;
  out += '\n';
}

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
    default:
      return "read_blob error: the store could not be read (" + std::string(detail) + "). Try again later.";
  }
}

}  // namespace

std::string_view page_mode_name(page_mode m) {
  switch (m) {
    case page_mode::full: return "full";
    case page_mode::pattern: return "pattern";
    case page_mode::range: return "range";
  }
  return "full";
}

std::optional<page_request> parse_page_request(std::string_view arguments_json, std::string& error) {
  auto j = nlohmann::json::parse(arguments_json, nullptr, false);
  if (!j.is_object()) {
    error = "read_blob error: arguments must be a JSON object like {\"handle\": \"…\"}.";
    return std::nullopt;
  }
  page_request r;
  auto handle = j.find("handle");
  if (handle == j.end() || !handle->is_string()) {
    error = "read_blob error: the \"handle\" argument (a string) is required.";
    return std::nullopt;
  }
  r.handle = handle->get<std::string>();
  for (auto& ch : r.handle) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  auto integer = [&](const char* key) -> std::optional<std::int64_t> {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (it->is_number_integer()) return it->get<std::int64_t>();
    if (it->is_number_float()) return std::int64_t(it->get<double>());
    if (it->is_string()) {
      try {
        return std::stoll(it->get<std::string>());
      } catch (...) {
      }
    }
    error = std::string("read_blob error: \"") + key + "\" must be an integer.";
    return std::nullopt;
  };
  if (auto it = j.find("pattern"); it != j.end() && it->is_string() && !it->get<std::string>().empty())
    r.pattern = it->get<std::string>();
  r.start_line = integer("start_line");
  r.end_line = integer("end_line");
  if (auto c = integer("context_lines")) r.context_lines = *c;
  if (!error.empty()) return std::nullopt;
  return r;
}

page_result page_in(blob_store& store, std::string_view tenant, const page_request& req, const page_limits& limits) {
  page_result r;
  r.mode = req.pattern ? page_mode::pattern : (req.start_line || req.end_line) ? page_mode::range : page_mode::full;
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
  const std::string_view bytes = got.bytes;

  if (r.mode == page_mode::full) {
    if (bytes.size() <= limits.page_max_bytes) {
      r.text = got.bytes;  // the exact bytes, nothing added
      r.bytes_returned = bytes.size();
      r.ok = true;
      return r;
    }
    auto cut = bytes.substr(0, limits.page_max_bytes).rfind('\n');
    std::size_t end = cut == std::string_view::npos ? limits.page_max_bytes : cut + 1;
    line_index lines(bytes.substr(0, end));
    r.text = std::string(bytes.substr(0, end));
    r.text += "\n[read_blob: first " + std::to_string(end) + " of " + std::to_string(bytes.size()) +
              " bytes (lines 1-" + std::to_string(lines.count()) + "). Read on with start_line=" +
              std::to_string(lines.count() + 1) + ", or search with pattern=.]";
    r.bytes_returned = end;
    r.ok = true;
    return r;
  }

  line_index lines(bytes);
  const std::size_t total = lines.count();
  if (r.mode == page_mode::range) {
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
      auto line = lines.line(bytes, std::size_t(i - 1));
      if (out.size() + line.size() > limits.page_max_bytes && i > first) break;
      append_numbered(out, std::size_t(i), ':', line);
      r.bytes_returned += line.size() + 1;
      shown_last = i;
    }
    r.text = "[lines " + std::to_string(first) + "-" + std::to_string(shown_last) + " of " + std::to_string(total) + "]\n" + out;
    if (shown_last < last)
      r.text += "[read_blob: page limit reached; continue with start_line=" + std::to_string(shown_last + 1) + "]";
    r.ok = true;
    return r;
  }

  // Pattern: POSIX extended regex, line by line (no backtracking blow-ups,
  // no recursion on long lines).
  regex_t re;
  int rc = regcomp(&re, req.pattern->c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char msg[256];
    regerror(rc, &re, msg, sizeof msg);
    r.text = "read_blob error: bad pattern \"" + *req.pattern + "\": " + msg + " (POSIX extended regex syntax).";
    return r;
  }
  const std::size_t context = std::size_t(std::clamp<std::int64_t>(req.context_lines, 0, std::int64_t(limits.max_context_lines)));
  std::vector<std::size_t> matches;
  std::size_t match_count = 0;
  std::string line_buf;
  for (std::size_t i = 0; i < total; ++i) {
    auto line = lines.line(bytes, i);
    line_buf.assign(line);
    if (regexec(&re, line_buf.c_str(), 0, nullptr, 0) == 0) {
      ++match_count;
      if (matches.size() < limits.max_matches) matches.push_back(i);
    }
  }
  regfree(&re);
  std::string out;
  std::size_t printed_until = 0;  // next line index not yet printed
  bool truncated = false;
  for (std::size_t m : matches) {
    std::size_t from = m >= context ? m - context : 0, to = std::min(total - 1, m + context);
    if (from > printed_until && !out.empty()) out += "--\n";
    for (std::size_t i = std::max(from, printed_until); i <= to; ++i) {
      auto line = lines.line(bytes, i);
      if (out.size() + line.size() > limits.page_max_bytes) {
        truncated = true;
        break;
      }
      append_numbered(out, i + 1, i == m ? ':' : '-', line);
      r.bytes_returned += line.size() + 1;
    }
    if (truncated) break;
    printed_until = to + 1;
  }
  r.text = "[" + std::to_string(match_count) + " of " + std::to_string(total) + " lines match \"" + *req.pattern + "\"";
  if (matches.size() < match_count || truncated) r.text += "; showing the first " + std::to_string(matches.size());
  r.text += "]\n" + out;
  r.ok = true;
  return r;
}

}  // namespace gistproxy::rewrite
