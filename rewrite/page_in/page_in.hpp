// The page-in engine: read_blob(handle, pattern?, start_line?, end_line?,
// context_lines?) answered from the blob store, re-hashing every time. The
// answer is text for the model: the exact bytes (whole, or a first page for a
// very large blob), matching lines, or a numbered line range; errors are
// sentences the model can act on, never wrong bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rewrite/blob/blob_store.hpp"

namespace gistproxy::rewrite {

struct page_request {
  std::string handle;
  std::optional<std::string> pattern;
  std::optional<std::int64_t> start_line, end_line;
  std::int64_t context_lines = 0;
};

// Parses a read_blob call's JSON arguments; nullopt and `error` if unusable.
std::optional<page_request> parse_page_request(std::string_view arguments_json, std::string& error);

struct page_limits {
  std::uint64_t page_max_bytes = 256 * 1024;
  std::size_t max_matches = 200;
  std::size_t max_context_lines = 20;
};

enum class page_mode { full, pattern, range };
std::string_view page_mode_name(page_mode m);

struct page_result {
  bool ok = false;
  std::string text;  // what goes back to the model
  page_mode mode = page_mode::full;
  std::uint64_t bytes_returned = 0;  // bytes of the blob included in text
  bool integrity_ok = true;          // false only when the re-hash failed
  blob_error error = blob_error::none;
  std::string hash;                  // full handle when found
  std::string tool_name;             // from the blob's metadata
};

page_result page_in(blob_store& store, std::string_view tenant, const page_request& request, const page_limits& limits);

}  // namespace gistproxy::rewrite
