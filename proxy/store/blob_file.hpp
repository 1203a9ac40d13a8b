// One stored blob as bytes: "GPB1 " + a one-line JSON header (metadata) + "\n"
// + one zstd frame. The filesystem store writes it to a file, the S3 store to
// an object; both read it back through decode_blob(), which treats it as
// hostile: capped decompression, metadata checked, the bytes re-hashed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rewrite/blob/blob_store.hpp"

namespace gistproxy::store {

// Empty with `error` set when compression fails.
std::string encode_blob(std::string_view bytes, const rewrite::blob_meta& meta, std::int64_t created_at, int zstd_level,
                        std::string& error);

// The blob's bytes and metadata, or an integrity error: a damaged header, a
// frame over `max_blob_bytes` or not matching its declared size, or bytes
// that do not hash to `expected_hash`.
rewrite::get_result decode_blob(std::string_view file, std::string_view expected_hash, std::uint64_t max_blob_bytes);

// Whether `file` is, as far as can be told without decompressing it, the
// blob of `hash` holding `size` bytes: its header names that hash and size,
// and one zstd frame of that content size fills the rest exactly (a
// truncated, extended, emptied or swapped file fails). A byte flipped inside
// the compressed data passes: only a read's re-hash finds that.
bool is_intact_blob(std::string_view file, std::string_view hash, std::uint64_t size);

// Whether `head` (the first bytes of a stored object) is a blob header
// gistproxy wrote for `hash`: what gc checks before it deletes anything.
bool is_blob_header_of(std::string_view head, std::string_view hash);

}  // namespace gistproxy::store
