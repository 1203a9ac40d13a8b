#include "proxy/store/fs_blob_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <cstring>
#include <random>

#include "proxy/store/blob_file.hpp"
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

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(std::size_t(n));
  }
  return true;
}

std::int64_t mtime_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return st.st_mtim.tv_sec;
}

void set_mtime(const fs::path& p, std::int64_t when) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = when;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  ::utimensat(AT_FDCWD, p.c_str(), times, 0);
}

// Reads a blob file the store wrote: a regular file, not a link (O_NOFOLLOW),
// not a FIFO or device (opened non-blocking, then fstat), and no larger than
// a compressed blob of max_blob bytes can be. nullopt on success.
std::optional<get_result> read_regular_file(const fs::path& path, std::uint64_t max_blob, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return get_result{blob_error::not_found, {}, {}, "no such blob"};
    if (errno == ELOOP) return get_result{blob_error::integrity, {}, {}, "blob path is a symbolic link"};
    return get_result{blob_error::io, {}, {}, std::string("cannot open blob: ") + std::strerror(errno)};
  }
  struct stat st {};
  const std::uint64_t limit = ZSTD_compressBound(max_blob) + max_header_bytes;
  std::optional<get_result> failure;
  if (::fstat(fd, &st) != 0) failure = get_result{blob_error::io, {}, {}, std::string("cannot stat blob: ") + std::strerror(errno)};
  else if (!S_ISREG(st.st_mode)) failure = get_result{blob_error::integrity, {}, {}, "blob path is not a regular file"};
  else if (std::uint64_t(st.st_size) > limit) failure = get_result{blob_error::integrity, {}, {}, "blob file is larger than any blob"};
  if (!failure) {
    out.resize(std::size_t(st.st_size));
    std::size_t got = 0;
    while (got < out.size()) {
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += std::size_t(n);
    }
    out.resize(got);  // a file that shrank under us reads short: the checks below catch it
  }
  ::close(fd);
  return failure;
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
  fs::create_directories(options_.root);
  rescan();
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
  const auto recheck = recheck_seconds();
  {
    std::lock_guard lock(confirmed_mutex_);
    if (auto it = confirmed_.find(key); it != confirmed_.end() && now - it->second < recheck) return true;
  }
  const bool there = kept(path_of(tenant, hash));
  std::lock_guard lock(confirmed_mutex_);
  if (!there) {
    confirmed_.erase(key);
    return false;
  }
  if (confirmed_.size() >= max_confirmed) confirmed_.clear();  // bounded; a miss costs a stat
  confirmed_[key] = now;
  return true;
}

// Whether the blob file is there, refreshing its age when due: one stat,
// asked for every offloaded output of every turn.
bool fs_blob_store::kept(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  const auto now = options_.now();
  if (now - st.st_mtim.tv_sec >= refresh_interval(options_.ttl_seconds, touch_granularity)) set_mtime(path, now);
  return true;
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
  fs::create_directories(dir, ec);
  if (ec) return false;
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

put_result fs_blob_store::store(std::string_view bytes, std::optional<std::string_view> encoded, const blob_meta& meta) {
  if (!is_valid_tenant(meta.tenant) || meta.hash.size() != 64)
    return {blob_error::io, false, "invalid tenant or hash"};
  if (bytes.size() > options_.max_blob_bytes)
    return {blob_error::too_large, false, "blob exceeds --max-blob-bytes"};
  auto path = path_of(meta.tenant, meta.hash);
  if (kept(path)) return {blob_error::none, true, {}};  // an offload seen again keeps its blob alive

  std::string error;
  std::string owned;
  const std::string_view out =
      encoded ? *encoded : std::string_view(owned = encode_blob(bytes, meta, options_.now(), options_.zstd_level, error));
  if (out.empty()) return {blob_error::io, false, error};

  std::error_code ec;
  if (!ensure_directory(path.parent_path(), false, ec))
    return {blob_error::io, false, "cannot create " + path.parent_path().string() + ": " + ec.message()};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  auto tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rng());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT && ensure_directory(path.parent_path(), true, ec))
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return {blob_error::io, false, "cannot create " + tmp.string() + ": " + std::strerror(errno)};
  bool ok = write_all(fd, out) && (!options_.durable || ::fsync(fd) == 0);
  ok = (::close(fd) == 0) && ok;
  // rename() is atomic: a concurrent writer of the same bytes just replaces an identical file.
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return {blob_error::io, false, "cannot write blob: " + std::string(std::strerror(err))};
  }
  set_mtime(path, options_.now());
  if (int dir = options_.durable ? ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1; dir >= 0) {
    ::fsync(dir);  // the rename itself survives a crash
    ::close(dir);
  }
  objects_.fetch_add(1);
  stored_bytes_.fetch_add(out.size());
  return {blob_error::none, false, {}};
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
  if (auto failure = read_regular_file(path, options_.max_blob_bytes, file)) return *std::move(failure);
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
    if (full.empty()) return {blob_error::not_found, {}, {}, "no blob with this handle for this API key"};
  }
  auto path = path_of(tenant, full);
  if (std::error_code exists_ec; !fs::exists(path, exists_ec) && !fs::is_symlink(path, exists_ec))
    return {blob_error::not_found, {}, {}, "no blob with this handle for this API key"};
  auto r = read_file(path, full, true);
  if (r.error == blob_error::none) touch(path);
  return r;
}

verify_report fs_blob_store::verify() {
  verify_report report;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(options_.root, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    // Anything named like a blob is checked, links, FIFOs, devices and
    // directories included: read_file refuses them, so verify names them as
    // corrupt, by their own path (not the target of a link).
    if (!name.ends_with(".blob") || name.size() != 69) continue;
    ++report.checked;
    auto r = read_file(it->path(), name.substr(0, 64), false);
    if (r.error != blob_error::none)
      report.corrupt.push_back(it->path().lexically_relative(options_.root).string() + ": " + r.message);
  }
  return report;
}

std::uint64_t fs_blob_store::gc(std::uint64_t max_removals) {
  {
    std::lock_guard lock(confirmed_mutex_);
    confirmed_.clear();  // what gc removes is never taken as there
  }
  std::uint64_t removed = 0;
  auto now = options_.now();
  std::error_code ec;
  for (fs::recursive_directory_iterator it(options_.root, ec), end; !ec && it != end && removed < max_removals;
       it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec)) continue;
    auto name = it->path().filename().string();
    bool stale_tmp = name.find(".tmp.") != std::string::npos && now - mtime_of(it->path()) > 3600;
    bool expired = name.ends_with(".blob") && now - mtime_of(it->path()) > options_.ttl_seconds;
    if (!stale_tmp && !expired) continue;
    auto size = it->file_size(type_ec);
    if (type_ec) size = 0;
    if (fs::remove(it->path(), type_ec) && expired) {
      ++removed;
      objects_.fetch_sub(1);
      stored_bytes_.fetch_sub(size);
    }
  }
  return removed;
}

store_stats fs_blob_store::stats() { return {objects_.load(), stored_bytes_.load()}; }

void fs_blob_store::remove(std::string_view tenant, std::string_view hash) {
  if (!is_valid_tenant(tenant) || hash.size() != 64) return;
  {
    std::lock_guard lock(confirmed_mutex_);
    confirmed_.erase(std::string(tenant) + '/' + std::string(hash));
  }
  std::error_code ec;
  auto path = path_of(tenant, hash);
  auto size = fs::file_size(path, ec);
  if (fs::remove(path, ec) && !ec) {
    objects_.fetch_sub(std::min<std::uint64_t>(objects_.load(), 1));
    stored_bytes_.fetch_sub(std::min<std::uint64_t>(stored_bytes_.load(), size));
  }
}

std::vector<fs_blob_store::blob_file_info> fs_blob_store::list_blobs() {
  std::vector<blob_file_info> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(options_.root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    const auto& p = it->path();
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec) || p.extension() != ".blob") continue;
    auto hash = p.stem().string();
    auto tenant = p.parent_path().parent_path().filename().string();
    if (hash.size() != 64 || !is_valid_tenant(tenant)) continue;
    out.push_back({tenant, hash, it->file_size(type_ec), mtime_of(p)});
  }
  return out;
}

void fs_blob_store::rescan() {
  std::uint64_t objects = 0, bytes = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(options_.root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && !it->is_symlink(type_ec) && it->path().extension() == ".blob") {
      ++objects;
      auto size = it->file_size(type_ec);
      bytes += type_ec ? 0 : size;
    }
  }
  objects_ = objects;
  stored_bytes_ = bytes;
}

}  // namespace gistproxy::store
