// The page-in engine: read_blob(handle, pattern?, start_line?, end_line?,
// context_lines?, offset?) answered from the blob store, re-hashing every
// time. The answer is text for the model: the exact bytes (whole, or a page
// from `offset` for a large blob), matching lines, or a numbered line range;
// errors are sentences the model can act on, never wrong bytes.
//
// The arguments are the model's, and prompt injection steers the model: every
// answer honours page_max_bytes and says how to read on, cuts fall on whole
// UTF-8 characters, and patterns run on RE2 (linear time, bounded memory)
// under a caller-supplied time budget.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "rewrite/blob/blob_store.hpp"

namespace gistproxy::rewrite {

struct page_request {
  std::string handle;
  std::optional<std::string> pattern;
  std::optional<std::string> query;  // words: the best lines by BM25 (line_query.hpp)
  std::optional<std::int64_t> start_line, end_line;
  std::int64_t context_lines = 0;
  std::optional<std::int64_t> offset;  // full mode: first byte of the page
};

// Parses a read_blob call's JSON arguments; nullopt and `error` if unusable.
std::optional<page_request> parse_page_request(std::string_view arguments_json, std::string& error);

struct page_limits {
  static page_limits with_page(std::uint64_t bytes) {
    page_limits l;
    l.page_max_bytes = bytes;
    return l;
  }
  std::uint64_t page_max_bytes = 256 * 1024;
  std::size_t max_matches = 200;
  std::size_t max_query_lines = 20;  // lines a query returns
  std::size_t max_query_bytes = 1024;
  std::size_t max_context_lines = 20;
  std::size_t max_pattern_bytes = 1024;
  std::uint64_t regex_max_mem = 8u << 20;  // RE2's compiled-program budget
  // Asked every few thousand lines of a pattern search: true stops it with
  // what it found so far (the caller owns the clock; empty = no budget).
  std::function<bool()> out_of_time;
};

// raw: the exact bytes, unpaged (the offload service's GET /v1/blobs/{handle}?raw=1).
enum class page_mode { full, pattern, range, query, raw };
std::string_view page_mode_name(page_mode m);

struct page_result {
  bool ok = false;
  std::string text;  // what goes back to the model
  page_mode mode = page_mode::full;
  std::uint64_t bytes_returned = 0;  // bytes of the blob included in text
  std::uint64_t blob_bytes = 0;      // of the blob as paged (binary: its base64), when found
  bool integrity_ok = true;          // false only when a re-hash failed (even if the blob was then stored again and served)
  blob_error error = blob_error::none;
  std::string hash;                  // full handle when found
  std::string tool_name;             // from the blob's metadata
};

page_result page_in(blob_store& store, std::string_view tenant, const page_request& request, const page_limits& limits);

// A blob's exact bytes in `text` (binary as stored, never re-encoded), after
// the same tenant-scoped lookup and re-hash as a page-in; errors as page_in's.
page_result read_raw(blob_store& store, std::string_view tenant, std::string_view handle);

}  // namespace gistproxy::rewrite
