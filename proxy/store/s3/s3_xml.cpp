#include "proxy/store/s3/s3_xml.hpp"

#include <ctime>

namespace gistproxy::store::s3 {
namespace {

// The text of the first <tag>…</tag> in [at, to) of xml, and where it ends.
// The search stops at `to`: a field missing from one <Contents> must not
// scan the rest of the body (was quadratic: a 1 MiB listing of objects with
// no <Size>, 20 s of CPU; 64 MiB, a day).
std::optional<std::string_view> element(std::string_view xml, std::string_view tag, std::size_t& at, std::size_t to) {
  const std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
  const std::string_view window = xml.substr(0, to);
  auto b = window.find(open, at);
  if (b == std::string_view::npos) return std::nullopt;
  auto e = window.find(close, b + open.size());
  if (e == std::string_view::npos) return std::nullopt;
  at = e + close.size();
  return xml.substr(b + open.size(), e - b - open.size());
}

std::optional<std::string_view> first(std::string_view xml, std::string_view tag, std::size_t from, std::size_t to) {
  return element(xml, tag, from, to);
}

}  // namespace

std::string xml_unescape(std::string_view s) {
  static constexpr std::pair<std::string_view, char> entities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool replaced = false;
    if (s[i] == '&')
      for (auto [name, c] : entities)
        if (s.substr(i, name.size()) == name) {
          out += c;
          i += name.size() - 1;
          replaced = true;
          break;
        }
    if (!replaced) out += s[i];
  }
  return out;
}

list_page parse_list_objects(std::string_view xml) {
  list_page page;
  std::size_t at = 0;
  while (auto contents = element(xml, "Contents", at, xml.size())) {
    const std::size_t base = std::size_t(contents->data() - xml.data());
    const std::size_t end = base + contents->size();
    listed_object o;
    if (auto k = first(xml, "Key", base, end)) o.key = xml_unescape(*k);
    if (auto m = first(xml, "LastModified", base, end)) o.last_modified = parse_iso8601(*m).value_or(0);
    if (auto s = first(xml, "Size", base, end)) o.size = std::strtoull(std::string(*s).c_str(), nullptr, 10);
    if (!o.key.empty()) page.objects.push_back(std::move(o));
  }
  at = 0;
  while (auto prefix = element(xml, "CommonPrefixes", at, xml.size())) {
    const std::size_t base = std::size_t(prefix->data() - xml.data());
    if (auto p = first(xml, "Prefix", base, base + prefix->size())) page.common_prefixes.push_back(xml_unescape(*p));
  }
  auto truncated = first(xml, "IsTruncated", 0, xml.size());
  auto token = first(xml, "NextContinuationToken", 0, xml.size());
  if (truncated && *truncated == "true" && token) page.next_token = xml_unescape(*token);
  return page;
}

std::string error_code_of(std::string_view body) {
  auto open = body.find("<Code>");
  if (open == std::string_view::npos) return {};
  auto close = body.find("</Code>", open);
  if (close == std::string_view::npos || close - open > 200) return {};
  return std::string(body.substr(open + 6, close - open - 6));
}

std::optional<std::int64_t> parse_iso8601(std::string_view s) {
  std::tm tm{};
  const std::string text(s.substr(0, 19));
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end) return std::nullopt;
  return std::int64_t(timegm(&tm));
}

std::optional<std::int64_t> parse_http_date(std::string_view s) {
  std::tm tm{};
  const std::string text(s);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end) return std::nullopt;
  return std::int64_t(timegm(&tm));
}

}  // namespace gistproxy::store::s3
