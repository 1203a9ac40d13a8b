// The S3-compatible blob store: one object per blob, PREFIX/<tenant>/<sha256>,
// holding the same bytes as a filesystem blob file (header + zstd frame; the
// metadata also in x-amz-meta-*). Written once (If-None-Match: *; a 412 means
// another replica stored the same bytes first), read back and re-hashed on
// every get. A blob's age is its object's Last-Modified: page-ins and
// re-offloads refresh it (a copy onto itself) at most once a day (four times
// per TTL when that is shorter), so a
// bucket lifecycle rule "expire N days after creation" acts as "N days since
// last use".
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "proxy/store/s3/s3_client.hpp"
#include "proxy/store/s3/s3_xml.hpp"
#include "rewrite/blob/blob_store.hpp"

namespace gistproxy::store {

struct s3_store_options {
  int zstd_level = 3;
  std::uint64_t max_blob_bytes = 16ull << 20;
  std::int64_t ttl_seconds = 7 * 86400;  // get() and gc() treat older objects as expired
  std::int64_t refresh_after_seconds = 86400;
  rewrite::clock_fn now;  // unix seconds; defaults to the system clock
  // gc on s3://BUCKET with no prefix would act on every object of the bucket,
  // other applications' included: refused unless the operator says so.
  bool allow_bucket_root = false;
  // One listing (a page-in by a short handle, verify, gc) ends after this
  // many pages or this long, whatever the endpoint says about more pages.
  std::size_t max_list_pages = 2000;
  std::chrono::milliseconds max_list_time{20000};
};

class s3_blob_store final : public rewrite::blob_store {
 public:
  s3_blob_store(std::unique_ptr<s3::client> client, s3_store_options options);

  rewrite::put_result put(std::string_view bytes, const rewrite::blob_meta& meta) override;
  rewrite::put_result put_encoded(std::string_view bytes, std::string_view encoded, const rewrite::blob_meta& meta) override;
  bool contains(std::string_view tenant, std::string_view hash) override;
  bool keep(std::string_view tenant, std::string_view hash) override;
  rewrite::get_result get(std::string_view tenant, std::string_view handle_prefix) override;
  rewrite::verify_report verify() override;
  std::uint64_t gc(std::uint64_t max_removals) override;
  // What this process wrote (a bucket has no cheap count).
  rewrite::store_stats stats() override { return {objects_.load(), stored_bytes_.load()}; }

  // Tenants with blobs (for `blob get` without --tenant).
  std::vector<std::string> tenants();
  // A HEAD of the bucket, to fail at startup on wrong credentials or a
  // missing bucket; empty when fine, else why not.
  std::string check_access();
  std::string key_of(std::string_view tenant, std::string_view hash) const;
  // True when the store has no prefix (gc refuses unless allow_bucket_root).
  bool at_bucket_root() const;
  void allow_bucket_root() { options_.allow_bucket_root = true; }
  // The tenant and hash of a key in gistproxy's own layout under the prefix
  // (PREFIX/<tenant>/<64 hex>); nullopt for any other key a listing returns.
  struct owned_key {
    std::string tenant, hash;
  };
  std::optional<owned_key> parse_key(std::string_view key) const;

 private:
  // Every object under `prefix` (the store's prefix prepended), page by page;
  // stops when `visit` returns false. `max_pages`: at most that many pages
  // (0: the store's max_list_pages), on top of max_list_time.
  bool list(std::string_view prefix, const std::function<bool(const s3::listed_object&)>& visit, std::string& error,
            std::size_t max_pages = 0);
  // Returns the object's age after the refresh (now if refreshed, else last_modified).
  std::int64_t refresh_if_old(const std::string& key, std::int64_t last_modified, const s3::header_list& meta);
  std::string root() const;
  rewrite::put_result store(std::string_view bytes, std::optional<std::string_view> encoded, const rewrite::blob_meta& meta);
  // What this process knows the bucket holds, and since when (the object's
  // Last-Modified as last seen, or when it wrote it): a re-offload of a known
  // blob whose age is fresh needs no request at all, and a page-in by a
  // 16-hex handle this process has seen needs no listing.
  bool known_fresh(const std::string& key);
  void remember(const std::string& tenant, const std::string& hash, std::int64_t last_modified);
  std::string known_full_hash(std::string_view tenant, std::string_view prefix);

  std::unique_ptr<s3::client> client_;
  s3_store_options options_;
  std::atomic<std::uint64_t> objects_{0};
  std::atomic<std::uint64_t> stored_bytes_{0};
  std::mutex known_mutex_;
  std::unordered_map<std::string, std::int64_t> known_;        // key → last write (bounded: cleared when full)
  std::unordered_map<std::string, std::string> known_handles_;  // tenant/16-hex → full hash
  std::unordered_map<std::string, std::int64_t> known_absent_;  // key → when a HEAD said 404 (bounded)
  static constexpr std::int64_t absent_ttl_seconds = 300;
};

}  // namespace gistproxy::store
