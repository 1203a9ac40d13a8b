// The gist that replaces an offloaded tool output in the conversation: what it
// was, its shape, a preview, and how to page it back with read_blob. The text
// depends only on the bytes and the configuration (no time, no counters), so
// the same output yields the same reference on every turn (prompt caches key
// on exact prefixes).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "rewrite/gist/content_shape.hpp"

namespace gistproxy::rewrite {

struct reference_config {
  std::size_t preview_tokens = 1000;  // at most; never more than a quarter of the output
  std::size_t handle_chars = 16;       // 16..64 hex characters of the SHA-256
  std::string tool_name = "read_blob"; // the paging tool's name as the model sees it
};

std::string render_reference(std::string_view bytes, const content_shape& shape, std::string_view tool_name,
                             std::string_view full_hash, const reference_config& cfg);

// True when `text` is a reference render_reference() wrote (its first line,
// its "Full output: NAME(\"HANDLE\")" line and its closing line) or an image
// placeholder render_image_reference() wrote: an output that already went
// through a gistproxy, never offloaded again.
bool is_reference(std::string_view text);

// The handle a reference names (16..64 hex), empty when `text` is not one.
std::string_view reference_handle(std::string_view text);

std::string render_image_reference(std::string_view media_type, std::size_t bytes, std::string_view tool_name,
                                   std::string_view full_hash, const reference_config& cfg);

// The first (or, for logs, last) whole lines that fit in max_bytes, cut on a
// UTF-8 boundary if a single line is longer. Sets `lines_shown`.
std::string_view preview_slice(std::string_view bytes, std::size_t max_bytes, bool from_end, std::size_t& lines_shown);

}  // namespace gistproxy::rewrite
