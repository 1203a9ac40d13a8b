// The filesystem blob store: ROOT/<tenant>/<hh>/<sha256>.blob, each file a
// one-line JSON header (metadata) followed by one zstd frame. Writes are
// atomic (temp file, fsync, rename), so concurrent writers of the same bytes
// are safe; the file's mtime is its last use and drives the TTL.
#pragma once

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <filesystem>
#include <optional>

#include "rewrite/blob/blob_store.hpp"
#include "rewrite/blob/digest.hpp"

namespace gistproxy::store {

using rewrite::blob_meta;
using rewrite::blob_store;
using rewrite::clock_fn;
using rewrite::get_result;
using rewrite::put_result;
using rewrite::store_stats;
using rewrite::verify_report;

// How often a blob in use has its age refreshed: `usual` (hourly, daily: one
// write per blob per interval at most), but at least four times per TTL, so a
// short TTL never expires a blob used moments ago.
inline std::int64_t refresh_interval(std::int64_t ttl_seconds, std::int64_t usual) {
  return std::clamp<std::int64_t>(ttl_seconds / 4, 1, usual);
}

struct fs_store_options {
  std::filesystem::path root = "gistproxy-blobs";
  int zstd_level = 3;
  std::uint64_t max_blob_bytes = 16ull << 20;
  std::int64_t ttl_seconds = 7 * 86400;
  clock_fn now;  // unix seconds; defaults to the system clock
  // fsync each blob and its directory before put() returns. Off only for a
  // cache whose blobs are durable elsewhere (--store-cache: the bucket has them).
  bool durable = true;
  // --store-max-bytes (0: no bound): a put that would take the blob files
  // past it is refused (blob_error::full), and gc() evicts the blobs least
  // recently kept down to evict_to_percent of it.
  std::uint64_t max_bytes = 0;
};

class fs_blob_store final : public blob_store {
 public:
  // Creates the root if needed and counts what is there (for stats()).
  explicit fs_blob_store(fs_store_options options);

  put_result put(std::string_view bytes, const blob_meta& meta) override;
  put_result put_encoded(std::string_view bytes, std::string_view encoded, const blob_meta& meta) override;
  bool contains(std::string_view tenant, std::string_view hash) override;
  bool keep(std::string_view tenant, std::string_view hash) override;
  std::uint64_t keep_trust_ns() const override { return std::uint64_t(recheck_seconds()) * 1'000'000'000u; }
  std::uint64_t losses() const override { return losses_.load(std::memory_order_relaxed); }
  get_result get(std::string_view tenant, std::string_view handle_prefix) override;
  verify_report verify() override;
  std::uint64_t gc(std::uint64_t max_removals) override;
  bool wants_gc() const override { return over_percent(evict_at_percent); }
  store_stats stats() override;

  std::filesystem::path path_of(std::string_view tenant, std::string_view hash) const;
  // For the local cache tier: drops one blob; every blob file with its size
  // on disk and last use (mtime), for rebuilding an LRU index at startup.
  void remove(std::string_view tenant, std::string_view hash);
  struct blob_file_info {
    std::string tenant, hash;
    std::uint64_t bytes_on_disk = 0;
    std::int64_t last_used = 0;
  };
  std::vector<blob_file_info> list_blobs();

 private:
  // Writes `encoded` (nullopt: encodes `bytes` now) unless the intact blob is there.
  put_result store(std::string_view bytes, std::optional<std::string_view> encoded, const blob_meta& meta);
  struct existing {
    bool present = false;  // anything at the path
    bool intact = false;   // the blob of this hash and size, as far as is_intact_blob tells
    std::uint64_t bytes_on_disk = 0;
    bool regular = false;  // a regular file (counted in stats)
  };
  existing existing_file(const std::filesystem::path& path, std::string_view hash, std::uint64_t size);
  std::string write_blob(const std::filesystem::path& path, std::string_view encoded);
  bool account(std::uint64_t adding, std::uint64_t freeing, bool bounded = true);
  // gc's helpers (fs_blob_walks.cpp).
  bool over_percent(std::uint64_t percent) const;  // of --store-max-bytes
  bool remove_blob(const std::filesystem::path& path, std::uint64_t size);
  void recount(std::uint64_t expected_objects, std::uint64_t expected_bytes, std::uint64_t seen_objects,
               std::uint64_t seen_bytes);
  static constexpr std::uint64_t evict_at_percent = 90;  // gc evicts past this share of the bound...
  static constexpr std::uint64_t evict_to_percent = 80;  // ...down to this one
  get_result read_file(const std::filesystem::path& path, std::string_view expected_hash, bool check_ttl);
  void touch(const std::filesystem::path& path);
  std::optional<std::uint64_t> kept(const std::filesystem::path& path);
  bool ensure_directory(const std::filesystem::path& dir, bool known_missing, std::error_code& ec);
  void rescan();
  std::uint64_t file_limit() const;  // the largest file a blob of max_blob_bytes can be

  // What keep() and put() learnt of a blob (tenant/hash): when it was last
  // seen, and its file's size when a put wrote or checked it (0: unknown).
  struct confirmation {
    std::int64_t when = 0;
    std::uint64_t bytes_on_disk = 0;
  };
  void confirm(const std::string& key, std::int64_t now, std::uint64_t bytes_on_disk);
  bool forget_confirmation(const std::string& key);  // whether there was one
  // A read found the blob damaged: keep() no longer confirms it and the
  // next put() of its bytes rewrites it, whatever the file looks like.
  void mark_damaged(const std::string& key);

  static constexpr std::size_t max_known_directories = 65536;
  static constexpr std::size_t max_confirmed = 1 << 18;
  static constexpr std::size_t max_damaged = 4096;
  static constexpr std::int64_t keep_recheck_seconds = 10;
  // How long keep() trusts a confirmation: well inside the TTL's refresh.
  std::int64_t recheck_seconds() const;
  std::mutex confirmed_mutex_;
  std::unordered_map<std::string, confirmation, rewrite::handle_key_hash, std::equal_to<>> confirmed_;
  std::unordered_set<std::string> damaged_;  // tenant/hash; under confirmed_mutex_
  fs_store_options options_;
  std::mutex directories_mutex_;
  std::unordered_set<std::string> directories_;  // blob directories known to exist
  std::atomic<std::uint64_t> losses_{0};  // reads that found a blob missing or damaged
  std::atomic<std::uint64_t> objects_{0};
  std::atomic<std::uint64_t> stored_bytes_{0};
};

// Tenants name directories: lowercase letters, digits, '-' and '_' only.
bool is_valid_tenant(std::string_view tenant);

}  // namespace gistproxy::store
