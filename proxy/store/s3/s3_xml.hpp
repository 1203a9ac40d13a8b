// The few parts of S3's XML answers the store reads (ListObjectsV2), and
// S3's two date formats. The body is hostile: lookups are bounded finds on
// the capped body, never a recursive parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::store::s3 {

struct listed_object {
  std::string key;
  std::int64_t last_modified = 0;  // unix seconds; 0 when missing
  std::uint64_t size = 0;
};

struct list_page {
  std::vector<listed_object> objects;
  std::vector<std::string> common_prefixes;
  std::string next_token;  // empty: the last page
};

list_page parse_list_objects(std::string_view xml);

// "2026-11-24T14:00:00.000Z" (XML) and "Tue, 24 Nov 2026 14:00:00 GMT" (headers).
std::optional<std::int64_t> parse_iso8601(std::string_view s);
std::optional<std::int64_t> parse_http_date(std::string_view s);

// S3's <Error><Code>…</Code> from an error body, or empty.
std::string error_code_of(std::string_view body);

// &amp; &lt; &gt; &quot; &apos; decoded; anything else kept.
std::string xml_unescape(std::string_view s);

}  // namespace gistproxy::store::s3
