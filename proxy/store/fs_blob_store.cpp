#include "proxy/store/fs_blob_store.hpp"

#include <sys/stat.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>

#include "proxy/store/blob_file.hpp"
#include "proxy/store/blob_io.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/json/checked.hpp"

namespace gistproxy::store {
namespace fs = std::filesystem;
using namespace gistproxy::rewrite;

namespace {

constexpr std::int64_t touch_granularity = 3600;  // refresh mtime at most hourly
constexpr std::uint64_t max_header_bytes = 64 * 1024;

std::int64_t system_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

bool is_valid_tenant(std::string_view t) {
  if (t.empty() || t.size() > 64) return false;
  for (char c : t)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  return true;
}

fs_blob_store::fs_blob_store(fs_store_options options) : options_(std::move(options)) {
  if (!options_.now) options_.now = system_now;
  std::error_code ec;
  if (!create_private_directories(options_.root, ec)) throw fs::filesystem_error("cannot create the store", options_.root, ec);
  rescan();
}

std::uint64_t fs_blob_store::file_limit() const {
  return ZSTD_compressBound(options_.max_blob_bytes) + max_header_bytes;
}

fs::path fs_blob_store::path_of(std::string_view tenant, std::string_view hash) const {
  return options_.root / std::string(tenant) / std::string(hash.substr(0, 2)) / (std::string(hash) + ".blob");
}

bool fs_blob_store::contains(std::string_view tenant, std::string_view hash) {
  if (!is_valid_tenant(tenant) || hash.size() != 64) return false;
  struct stat st {};
  return ::stat(path_of(tenant, hash).c_str(), &st) == 0;
}

// Every offloaded output of every turn of a conversation is kept again: a
// blob found (or written) within the last few seconds is taken as still there
// without a stat, the trust the S3 store gives what it wrote. Only a blob
// deleted from outside the process meanwhile (by hand, or by a `blob gc` with
// a TTL shorter than a few seconds) goes unnoticed for that long.
std::int64_t fs_blob_store::recheck_seconds() const {
  return std::min<std::int64_t>(keep_recheck_seconds, refresh_interval(options_.ttl_seconds, touch_granularity) / 2);
}

bool fs_blob_store::keep(std::string_view tenant, std::string_view hash) {
  if (!is_valid_tenant(tenant) || hash.size() != 64) return false;
  thread_local std::string key;  // asked a few hundred times a turn: no allocation each
  key.assign(tenant);
  key += '/';
  key += hash;
  const auto now = options_.now();
  std::uint64_t verified_bytes = 0;
  {
    std::lock_guard lock(confirmed_mutex_);
    if (!damaged_.empty() && damaged_.count(key)) return false;  // a read found it damaged: only a put of its bytes repairs it
    if (auto it = confirmed_.find(key); it != confirmed_.end()) {
      if (now - it->second.when < recheck_seconds()) return true;
      verified_bytes = it->second.bytes_on_disk;
    }
  }
  const auto on_disk = kept(path_of(tenant, hash));
  // A file whose size changed since a put verified it is not the blob it
  // was (truncated, or replaced): the caller's put() then checks and repairs.
  const bool there = on_disk && (!verified_bytes || *on_disk == verified_bytes);
  if (!there) {
    forget_confirmation(key);
    return false;
  }
  confirm(key, now, verified_bytes);
  return true;
}

// The blob file's size if it is there, refreshing its age when due: one
// stat, asked for every offloaded output of every turn.
std::optional<std::uint64_t> fs_blob_store::kept(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  const auto now = options_.now();
  if (now - st.st_mtim.tv_sec >= refresh_interval(options_.ttl_seconds, touch_granularity)) set_mtime(path, now);
  return std::uint64_t(st.st_size);
}

void fs_blob_store::confirm(const std::string& key, std::int64_t now, std::uint64_t bytes_on_disk) {
  std::lock_guard lock(confirmed_mutex_);
  if (confirmed_.size() >= max_confirmed) confirmed_.clear();  // bounded; a miss costs a stat
  confirmed_[key] = {now, bytes_on_disk};
}

bool fs_blob_store::forget_confirmation(const std::string& key) {
  std::lock_guard lock(confirmed_mutex_);
  return confirmed_.erase(key) > 0;
}

void fs_blob_store::mark_damaged(const std::string& key) {
  losses_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(confirmed_mutex_);
  confirmed_.erase(key);
  if (damaged_.size() >= max_damaged) damaged_.clear();  // bounded; a forgotten one is found by its next read again
  damaged_.insert(key);
}

// Blob directories are created once; a directory removed since (by hand) is
// noticed when a file cannot be created in it.
bool fs_blob_store::ensure_directory(const fs::path& dir, bool known_missing, std::error_code& ec) {
  const auto key = dir.native();
  {
    std::lock_guard lock(directories_mutex_);
    if (!known_missing && directories_.count(key)) return true;
    directories_.erase(key);
  }
  if (!create_private_directories(dir, ec)) return false;
  std::lock_guard lock(directories_mutex_);
  if (directories_.size() >= max_known_directories) directories_.clear();  // bounded; a miss costs a mkdir
  directories_.insert(key);
  return true;
}

void fs_blob_store::touch(const fs::path& path) {
  auto now = options_.now();
  if (now - mtime_of(path) >= refresh_interval(options_.ttl_seconds, touch_granularity)) set_mtime(path, now);
}

put_result fs_blob_store::put(std::string_view bytes, const blob_meta& meta) { return store(bytes, std::nullopt, meta); }

put_result fs_blob_store::put_encoded(std::string_view bytes, std::string_view encoded, const blob_meta& meta) {
  return store(bytes, encoded, meta);
}

// What is at a blob's path before a put: nothing, the intact blob (a
// dedupe), or something else the put replaces (damaged, truncated, a link).
fs_blob_store::existing fs_blob_store::existing_file(const fs::path& path, std::string_view hash, std::uint64_t size) {
  std::string file;
  auto failure = read_regular_file(path, file_limit(), file);
  if (failure && failure->error == blob_error::not_found) return {};
  struct stat st {};
  const bool regular = ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  return {true, !failure && is_intact_blob(file, hash, size), regular ? std::uint64_t(st.st_size) : 0, regular};
}

put_result fs_blob_store::store(std::string_view bytes, std::optional<std::string_view> encoded, const blob_meta& meta) {
  if (!is_valid_tenant(meta.tenant) || meta.hash.size() != 64)
    return {blob_error::io, false, "invalid tenant or hash"};
  if (bytes.size() > options_.max_blob_bytes)
    return {blob_error::too_large, false, "blob exceeds --max-blob-bytes"};
  const auto path = path_of(meta.tenant, meta.hash);
  const std::string key = meta.tenant + '/' + meta.hash;
  bool suspect = false;
  std::uint64_t accounted = 0;  // what stats() counts for this blob, when the store wrote or checked it
  {
    std::lock_guard lock(confirmed_mutex_);
    suspect = damaged_.count(key) > 0;
    if (auto it = confirmed_.find(key); it != confirmed_.end()) accounted = it->second.bytes_on_disk;
  }
  // The file is not trusted for being there: a put has the bytes at hand,
  // so what does not hold them is replaced (a read found it damaged, or it
  // is not the frame its header declares).
  const auto before = existing_file(path, meta.hash, bytes.size());
  if (before.present && before.intact && !suspect) {
    touch(path);  // an offload seen again keeps its blob alive
    confirm(key, options_.now(), before.bytes_on_disk);
    return {blob_error::none, true, {}};
  }

  // The replaced file counts as the store last knew it (one damaged from
  // outside changed size without telling it; gc's walk recounts).
  const auto replaced = before.regular ? (accounted ? accounted : before.bytes_on_disk) : 0;
  if (options_.max_bytes && stored_bytes_.load() >= options_.max_bytes && !before.regular)
    return {blob_error::full, false, "the store is at --store-max-bytes"};  // before compressing anything
  std::string error;
  std::string owned;
  const std::string_view out =
      encoded ? *encoded : std::string_view(owned = encode_blob(bytes, meta, options_.now(), options_.zstd_level, error));
  if (out.empty()) return {blob_error::io, false, error};
  if (!account(out.size(), replaced)) return {blob_error::full, false, "the store is at --store-max-bytes"};
  if (auto failed = write_blob(path, out); !failed.empty()) {
    account(replaced, out.size(), false);
    return {blob_error::io, false, failed};
  }
  {
    std::lock_guard lock(confirmed_mutex_);
    damaged_.erase(key);
  }
  confirm(key, options_.now(), out.size());
  if (!before.regular) objects_.fetch_add(1);
  // Something was there and was not this blob: damaged from outside. A read
  // that found it so counted it already; this put found it itself.
  return {blob_error::none, false, {}, before.present && !suspect};
}

// Counts `adding` bytes in and `freeing` out of the store, in one step so
// concurrent puts never overshoot the bound together; false (nothing
// counted) when `bounded` and the store would end past --store-max-bytes.
bool fs_blob_store::account(std::uint64_t adding, std::uint64_t freeing, bool bounded) {
  auto now_bytes = stored_bytes_.load();
  std::uint64_t after = 0;
  do {
    after = now_bytes - std::min(now_bytes, freeing) + adding;
    if (bounded && options_.max_bytes && adding > freeing && after > options_.max_bytes) return false;
  } while (!stored_bytes_.compare_exchange_weak(now_bytes, after));
  return true;
}

// Writes one blob file atomically (a damaged one is replaced whole), its
// directory created when missing; empty on success, else why not.
std::string fs_blob_store::write_blob(const fs::path& path, std::string_view out) {
  std::error_code ec;
  if (!ensure_directory(path.parent_path(), false, ec))
    return "cannot create " + path.parent_path().string() + ": " + ec.message();
  std::string error;
  int err = write_atomically(path, out, options_.durable, error);
  if (err == ENOENT && ensure_directory(path.parent_path(), true, ec)) err = write_atomically(path, out, options_.durable, error);
  if (err) return error;
  set_mtime(path, options_.now());
  if (options_.durable) sync_directory(path.parent_path());  // the rename itself survives a crash
  return {};
}

get_result fs_blob_store::read_file(const fs::path& path, std::string_view expected_hash, bool check_ttl) {
  get_result r;
  if (check_ttl) {
    auto m = mtime_of(path);
    if (m >= 0 && options_.now() - m > options_.ttl_seconds) {
      r.error = blob_error::expired;
      r.message = "blob expired (unused for longer than the TTL)";
      return r;
    }
  }
  std::string file;
  if (auto failure = read_regular_file(path, file_limit(), file)) return *std::move(failure);
  return decode_blob(file, expected_hash, options_.max_blob_bytes);
}

get_result fs_blob_store::get(std::string_view tenant, std::string_view prefix) {
  if (!is_handle_prefix(prefix)) return {blob_error::not_found, {}, {}, "a handle is 16 to 64 lowercase hex characters"};
  if (!is_valid_tenant(tenant)) return {blob_error::not_found, {}, {}, "unknown tenant"};
  std::string full;
  if (prefix.size() == 64) {
    full = std::string(prefix);
  } else {
    std::error_code ec;
    auto dir = options_.root / std::string(tenant) / std::string(prefix.substr(0, 2));
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      auto name = it->path().filename().string();
      if (name.size() == 69 && name.ends_with(".blob") && name.compare(0, prefix.size(), prefix) == 0) {
        if (!full.empty()) return {blob_error::ambiguous, {}, {}, "handle prefix matches several blobs; use more characters"};
        full = name.substr(0, 64);
      }
    }
    // A directory that could not be listed (out of descriptors) is not an
    // unknown handle: the blob may well be there.
    if (ec == std::errc::too_many_files_open || ec == std::errc::too_many_files_open_in_system) {
      count_descriptor_shortage(ec.value());
      return {blob_error::io, {}, {}, "cannot list blobs: " + ec.message()};
    }
    if (full.empty()) return {blob_error::not_found, {}, {}, "no blob with this handle for this API key"};
  }
  auto path = path_of(tenant, full);
  const std::string key = std::string(tenant) + '/' + full;
  if (std::error_code exists_ec; !fs::exists(path, exists_ec) && !fs::is_symlink(path, exists_ec)) {
    // Deleted behind the store's back: keep() looks again, and no
    // confirmation remembered elsewhere holds (one it had confirmed).
    if (forget_confirmation(key)) losses_.fetch_add(1, std::memory_order_relaxed);
    return {blob_error::not_found, {}, {}, "no blob with this handle for this API key"};
  }
  auto r = read_file(path, full, true);
  if (r.error == blob_error::none) touch(path);
  if (r.error == blob_error::integrity) mark_damaged(key);  // the next put of its bytes replaces it
  return r;
}

}  // namespace gistproxy::store
