// An in-memory blob store for tests: same contract as the filesystem store
// (content addressing, tenants, TTL, re-hash on read), plus a way to corrupt
// a stored blob on purpose.
#pragma once

#include <map>
#include <mutex>

#include "rewrite/blob/blob_store.hpp"

namespace gistproxy::rewrite {

class memory_blob_store final : public blob_store {
 public:
  explicit memory_blob_store(clock_fn now, std::int64_t ttl_seconds = 7 * 86400,
                             std::uint64_t max_blob_bytes = 16ull << 20)
      : now_(std::move(now)), ttl_(ttl_seconds), max_(max_blob_bytes) {}

  put_result put(std::string_view bytes, const blob_meta& meta) override;
  bool contains(std::string_view tenant, std::string_view hash) override;
  get_result get(std::string_view tenant, std::string_view handle_prefix) override;
  verify_report verify() override;
  std::uint64_t gc(std::uint64_t max_removals) override;
  store_stats stats() override;

  // Flips a byte of a stored blob (tests of the integrity check).
  void corrupt(std::string_view tenant, std::string_view hash);
  std::uint64_t writes() const { return writes_; }

 private:
  struct entry {
    std::string bytes;
    blob_meta meta;
    std::int64_t last_used;
  };
  std::mutex mutex_;
  std::map<std::string, entry> blobs_;  // key: tenant + '/' + hash
  clock_fn now_;
  std::int64_t ttl_;
  std::uint64_t max_;
  std::uint64_t writes_ = 0;
};

}  // namespace gistproxy::rewrite
