// A local disk cache in front of a remote (S3) store: --store-cache DIR,
// --store-cache-bytes. Writes go to the remote store first (a reference is
// forwarded only once its blob is durable there), then to the cache; reads
// are served from the cache when it has the blob (the filesystem store
// re-hashes every read: a damaged cache file is dropped and the blob fetched
// again), else from the remote store, and then cached. Least recently used
// blobs leave the cache past its byte budget. A re-offload the cache knows
// skips the remote store, except once per refresh interval, so the object's
// age in the bucket is still refreshed while the conversation lives.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proxy/store/fs_blob_store.hpp"

namespace gistproxy::store {

struct cache_options {
  std::uint64_t max_bytes = 1ull << 30;            // compressed bytes on disk
  std::int64_t remote_refresh_seconds = 86400;    // re-offloads reach the remote store at least this often
  clock_fn now;                                     // unix seconds; defaults to the system clock
  int zstd_level = 3;                               // the blob is compressed once, for both stores
};

class cached_blob_store final : public blob_store {
 public:
  cached_blob_store(std::unique_ptr<blob_store> remote, std::unique_ptr<fs_blob_store> cache, cache_options options);

  put_result put(std::string_view bytes, const blob_meta& meta) override;
  bool contains(std::string_view tenant, std::string_view hash) override;
  bool keep(std::string_view tenant, std::string_view hash) override;
  get_result get(std::string_view tenant, std::string_view handle_prefix) override;
  verify_report verify() override { return remote_->verify(); }  // the bucket is the truth
  std::uint64_t gc(std::uint64_t max_removals) override { return remote_->gc(max_removals); }
  store_stats stats() override { return remote_->stats(); }

  std::uint64_t cached_bytes();
  blob_store& remote() { return *remote_; }

 private:
  struct entry {
    std::string key;  // tenant/hash
    std::uint64_t bytes = 0;
    std::int64_t remote_checked = 0;  // when the remote store last saw a put of it
  };
  // Records a blob now in the cache (most recently used) and evicts past the budget.
  void admit(const std::string& tenant, const std::string& hash, std::int64_t remote_checked);
  void touch(std::list<entry>::iterator it);
  // Drops least recently used entries (keeping at least `keep`) until the
  // budget holds; returns them (tenant, hash) for removal outside the lock.
  std::vector<std::pair<std::string, std::string>> evict_over_budget(std::size_t keep);
  void forget(const std::string& tenant, const std::string& hash);

  std::unique_ptr<blob_store> remote_;
  std::unique_ptr<fs_blob_store> cache_;
  cache_options options_;
  std::mutex mutex_;
  std::list<entry> lru_;  // front: most recently used
  std::unordered_map<std::string, std::list<entry>::iterator> index_;
  std::uint64_t total_ = 0;
};

}  // namespace gistproxy::store
