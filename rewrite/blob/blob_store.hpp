// The blob store seam: content-addressed, tenant-scoped, lossless. The
// filesystem store is the embedded default; an S3-compatible backend would be
// another implementation of this interface, invisible to callers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::rewrite {

struct blob_meta {
  std::string hash;          // full SHA-256, 64 lowercase hex
  std::uint64_t size = 0;    // bytes before compression
  std::string kind;          // json, log, source, text, image/png, …
  std::int64_t created_at = 0;  // unix seconds
  std::string tenant;
  std::string tool_name;
};

enum class blob_error {
  none,
  not_found,     // unknown handle for this tenant (other tenants' handles look the same)
  ambiguous,     // the prefix names several blobs
  expired,       // past its TTL: final
  integrity,     // bytes on disk do not hash to the handle: never returned
  too_large,     // over the store's size cap (not offloaded / refused to decompress)
  io,            // the store could not read or write
  full,          // storing it would take the store past its byte bound (--store-max-bytes): not stored
};
std::string_view blob_error_name(blob_error e);

struct put_result {
  blob_error error = blob_error::none;
  bool deduplicated = false;  // the bytes were already stored: nothing written
  std::string message;
  // What the store held under the bytes' hash was not them (a cut, damaged
  // or foreign file) and the put replaced it: an integrity failure this put
  // found. One a read had found already (and counted) is replaced without it.
  bool found_damaged = false;
};

struct get_result {
  blob_error error = blob_error::none;
  std::string bytes;
  blob_meta meta;
  std::string message;
};

struct store_stats {
  std::uint64_t objects = 0;
  std::uint64_t stored_bytes = 0;  // compressed, on disk
};

struct verify_report {
  std::uint64_t checked = 0;
  std::vector<std::string> corrupt;  // "tenant/hash: reason"
};

class blob_store {
 public:
  virtual ~blob_store() = default;
  // Stores bytes under sha256(bytes) for the tenant; `meta.hash` must be that hash.
  virtual put_result put(std::string_view bytes, const blob_meta& meta) = 0;
  // put() with the blob already in its stored form (`encoded`: what the
  // store would write for these bytes), so a tier that writes two stores
  // compresses once. A store that has no use for it stores `bytes` as put() does.
  virtual put_result put_encoded(std::string_view bytes, std::string_view encoded, const blob_meta& meta) {
    (void)encoded;
    return put(bytes, meta);
  }
  // True if the tenant already holds this full hash (cheap: no read).
  virtual bool contains(std::string_view tenant, std::string_view hash) = 0;
  // contains(), for a blob about to be referenced again: a store whose put()
  // of bytes it holds refreshes their TTL does the same here.
  virtual bool keep(std::string_view tenant, std::string_view hash) { return contains(tenant, hash); }
  // How long a keep() or put() that succeeded may be taken as still true
  // without asking again, in nanoseconds (0: ask every time). A store that
  // trusts its own confirmations for a while says for how long; a caller
  // that remembers one (the offload engine, from one turn of a conversation
  // to the next) trusts it no longer, so it never asks less often than the
  // store would look.
  virtual std::uint64_t keep_trust_ns() const { return 0; }
  // How many times a read found one of the store's blobs missing or damaged.
  // A remembered confirmation is trusted only while this count holds: the
  // blob it names may be the one lost, and the next put of its bytes must
  // reach the store to repair it.
  virtual std::uint64_t losses() const { return 0; }
  // Reads, decompresses (capped) and re-hashes; resolves a 16..64-hex prefix.
  // A successful read refreshes the TTL.
  virtual get_result get(std::string_view tenant, std::string_view handle_prefix) = 0;
  // Re-hashes every blob.
  virtual verify_report verify() = 0;
  // Removes expired blobs (and, past a store's byte bound, the least
  // recently kept), at most max_removals per call; returns how many.
  virtual std::uint64_t gc(std::uint64_t max_removals) = 0;
  // True when gc() has work that should not wait for its next hour: the
  // store is near its byte bound, and new offloads will soon stay inline.
  virtual bool wants_gc() const { return false; }
  virtual store_stats stats() = 0;
};

// Unix seconds; injected so tests control time.
using clock_fn = std::function<std::int64_t()>;

}  // namespace gistproxy::rewrite
