#include "proxy/store/cached_blob_store.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

#include "proxy/store/blob_file.hpp"

namespace gistproxy::store {
using namespace gistproxy::rewrite;

namespace {

std::string key_of(std::string_view tenant, std::string_view hash) { return std::string(tenant) + "/" + std::string(hash); }

std::int64_t system_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

cached_blob_store::cached_blob_store(std::unique_ptr<blob_store> remote, std::unique_ptr<fs_blob_store> cache,
                                     cache_options options)
    : remote_(std::move(remote)), cache_(std::move(cache)), options_(std::move(options)) {
  if (!options_.now) options_.now = system_now;
  // What an earlier run left in the cache, least recently used evicted first.
  auto files = cache_->list_blobs();
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.last_used > b.last_used; });
  for (auto& f : files) {
    lru_.push_back({key_of(f.tenant, f.hash), f.bytes_on_disk, 0});
    index_[lru_.back().key] = std::prev(lru_.end());
    total_ += f.bytes_on_disk;
  }
  for (const auto& [t, h] : evict_over_budget(0)) cache_->remove(t, h);
}

std::vector<std::pair<std::string, std::string>> cached_blob_store::evict_over_budget(std::size_t keep) {
  std::vector<std::pair<std::string, std::string>> evicted;
  while (total_ > options_.max_bytes && lru_.size() > keep) {
    auto& last = lru_.back();
    auto slash = last.key.find('/');
    evicted.emplace_back(last.key.substr(0, slash), last.key.substr(slash + 1));
    total_ -= last.bytes;
    index_.erase(last.key);
    lru_.pop_back();
  }
  return evicted;
}

void cached_blob_store::touch(std::list<entry>::iterator it) { lru_.splice(lru_.begin(), lru_, it); }

void cached_blob_store::admit(const std::string& tenant, const std::string& hash, std::int64_t remote_checked) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(cache_->path_of(tenant, hash), ec);
  if (ec) return;  // the cache write failed: nothing cached, nothing to account
  std::vector<std::pair<std::string, std::string>> evicted;
  {
    std::lock_guard lock(mutex_);
    const auto key = key_of(tenant, hash);
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->remote_checked = std::max(it->second->remote_checked, remote_checked);
      touch(it->second);
      return;
    }
    lru_.push_front({key, bytes, remote_checked});
    index_[key] = lru_.begin();
    total_ += bytes;
    evicted = evict_over_budget(1);  // never the blob just admitted
  }
  for (const auto& [t, h] : evicted) cache_->remove(t, h);
}

void cached_blob_store::forget(const std::string& tenant, const std::string& hash) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key_of(tenant, hash)); it != index_.end()) {
      total_ -= it->second->bytes;
      lru_.erase(it->second);
      index_.erase(it);
    }
  }
  cache_->remove(tenant, hash);
}

std::uint64_t cached_blob_store::cached_bytes() {
  std::lock_guard lock(mutex_);
  return total_;
}

put_result cached_blob_store::put(std::string_view bytes, const blob_meta& meta) {
  const auto now = options_.now();
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key_of(meta.tenant, meta.hash));
        it != index_.end() && now - it->second->remote_checked < options_.remote_refresh_seconds) {
      touch(it->second);
      return {blob_error::none, true, {}};  // the remote store saw it recently: durable, age fresh
    }
  }
  // Compressed once, the same stored form for both stores.
  std::string error;
  const std::string encoded = encode_blob(bytes, meta, now, options_.zstd_level, error);
  if (encoded.empty()) return {blob_error::io, false, error};
  auto r = remote_->put_encoded(bytes, encoded, meta);  // durable first: no reference without it
  if (r.error != blob_error::none) return r;
  if (!cache_->contains(meta.tenant, meta.hash)) cache_->put_encoded(bytes, encoded, meta);  // best effort
  admit(meta.tenant, meta.hash, now);
  return r;
}

// What put() would take as stored without the remote store; else put() runs.
bool cached_blob_store::keep(std::string_view tenant, std::string_view hash) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key_of(tenant, hash));
  if (it == index_.end() || options_.now() - it->second->remote_checked >= options_.remote_refresh_seconds) return false;
  touch(it->second);
  return true;
}

bool cached_blob_store::contains(std::string_view tenant, std::string_view hash) {
  {
    std::lock_guard lock(mutex_);
    if (index_.count(key_of(tenant, hash))) return true;
  }
  return remote_->contains(tenant, hash);
}

get_result cached_blob_store::get(std::string_view tenant, std::string_view prefix) {
  auto local = cache_->get(tenant, prefix);
  if (local.error == blob_error::none) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key_of(tenant, local.meta.hash)); it != index_.end()) touch(it->second);
    return local;
  }
  // A damaged cache file is only a miss: drop it, the bucket has the bytes.
  if (local.error == blob_error::integrity) {
    const std::string hash = !local.meta.hash.empty() ? local.meta.hash : prefix.size() == 64 ? std::string(prefix) : "";
    if (!hash.empty()) forget(std::string(tenant), hash);
  }
  auto remote = remote_->get(tenant, prefix);
  if (remote.error == blob_error::none) {
    auto meta = remote.meta;
    meta.tenant = std::string(tenant);
    if (!cache_->contains(tenant, meta.hash)) cache_->put(remote.bytes, meta);
    admit(std::string(tenant), remote.meta.hash, 0);
  }
  return remote;
}

}  // namespace gistproxy::store
