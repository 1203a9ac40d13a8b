#include "rewrite/blob/memory_blob_store.hpp"

#include "rewrite/blob/digest.hpp"

namespace gistproxy::rewrite {
namespace {
std::string key_of(std::string_view tenant, std::string_view hash) {
  return std::string(tenant) + "/" + std::string(hash);
}
}  // namespace

put_result memory_blob_store::put(std::string_view bytes, const blob_meta& meta) {
  if (bytes.size() > max_) return {blob_error::too_large, false, "blob exceeds the size cap"};
  std::lock_guard lock(mutex_);
  auto [it, inserted] = blobs_.try_emplace(key_of(meta.tenant, meta.hash));
  it->second.last_used = now_();
  if (!inserted) return {blob_error::none, true, {}};
  it->second.bytes = std::string(bytes);
  it->second.meta = meta;
  it->second.meta.size = bytes.size();
  it->second.meta.created_at = now_();
  ++writes_;
  return {};
}

bool memory_blob_store::contains(std::string_view tenant, std::string_view hash) {
  std::lock_guard lock(mutex_);
  return blobs_.count(key_of(tenant, hash)) > 0;
}

get_result memory_blob_store::get(std::string_view tenant, std::string_view prefix) {
  if (!is_handle_prefix(prefix)) return {blob_error::not_found, {}, {}, "a handle is 16 to 64 lowercase hex characters"};
  std::lock_guard lock(mutex_);
  auto first = key_of(tenant, prefix);
  entry* found = nullptr;
  for (auto it = blobs_.lower_bound(first); it != blobs_.end() && it->first.compare(0, first.size(), first) == 0; ++it) {
    if (found) return {blob_error::ambiguous, {}, {}, "handle prefix matches several blobs; use more characters"};
    found = &it->second;
  }
  if (!found) return {blob_error::not_found, {}, {}, "no blob with this handle for this API key"};
  if (now_() - found->last_used > ttl_) return {blob_error::expired, {}, found->meta, "blob expired"};
  if (sha256_hex(found->bytes) != found->meta.hash)
    return {blob_error::integrity, {}, found->meta, "blob bytes do not match their SHA-256 handle"};
  found->last_used = now_();
  return {blob_error::none, found->bytes, found->meta, {}};
}

verify_report memory_blob_store::verify() {
  std::lock_guard lock(mutex_);
  verify_report r;
  for (auto& [k, e] : blobs_) {
    ++r.checked;
    if (sha256_hex(e.bytes) != e.meta.hash) r.corrupt.push_back(k + ": hash mismatch");
  }
  return r;
}

std::uint64_t memory_blob_store::gc(std::uint64_t max_removals) {
  std::lock_guard lock(mutex_);
  std::uint64_t removed = 0;
  for (auto it = blobs_.begin(); it != blobs_.end() && removed < max_removals;) {
    if (now_() - it->second.last_used > ttl_) {
      it = blobs_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

store_stats memory_blob_store::stats() {
  std::lock_guard lock(mutex_);
  store_stats s;
  for (auto& [k, e] : blobs_) {
    ++s.objects;
    s.stored_bytes += e.bytes.size();
  }
  return s;
}

void memory_blob_store::corrupt(std::string_view tenant, std::string_view hash) {
  std::lock_guard lock(mutex_);
  auto it = blobs_.find(key_of(tenant, hash));
  if (it != blobs_.end() && !it->second.bytes.empty()) it->second.bytes[0] ^= 0x20;
}

}  // namespace gistproxy::rewrite
