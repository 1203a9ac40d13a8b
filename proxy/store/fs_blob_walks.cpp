// The filesystem store's walks over every blob file: verify, gc (expiry,
// the byte bound's eviction, recounting), the cache tier's listing and
// removal, and the count at start.
#include <queue>
#include <vector>

#include "proxy/store/blob_io.hpp"
#include "proxy/store/fs_blob_store.hpp"

namespace gistproxy::store {
namespace fs = std::filesystem;
using namespace gistproxy::rewrite;

namespace {

// "tenant/hash" of a blob file's path: the key its confirmation is kept under.
std::string key_of_path(const fs::path& p) {
  return p.parent_path().parent_path().filename().string() + '/' + p.stem().string();
}

struct eviction_candidate {
  std::int64_t last_used = 0;
  std::uint64_t bytes = 0;
  fs::path path;
};
struct newest_on_top {
  bool operator()(const eviction_candidate& a, const eviction_candidate& b) const { return a.last_used < b.last_used; }
};

}  // namespace

verify_report fs_blob_store::verify() {
  verify_report report;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(options_.root, ec), end; !ec && it != end; it.increment(ec)) {
    const auto where = it->path().lexically_relative(options_.root).string();
    auto name = it->path().filename().string();
    // Anything named like a blob is checked, links, FIFOs, devices and
    // directories included: read_file refuses them, so verify names them as
    // corrupt, by their own path (not the target of a link).
    if (name.ends_with(".blob") && name.size() == 69) {
      ++report.checked;
      auto r = read_file(it->path(), name.substr(0, 64), false);
      if (r.error != blob_error::none) report.corrupt.push_back(where + ": " + r.message);
      continue;
    }
    // The store writes directories and regular files only (blobs, and the
    // temporary files they are written through). A FIFO, socket, device or
    // link under any other name is not the store's: named, never opened,
    // and verify fails on it (was: skipped, and verify passed).
    std::error_code type_ec;
    const auto type = it->symlink_status(type_ec).type();
    if (!type_ec && type != fs::file_type::directory && type != fs::file_type::regular) {
      ++report.checked;
      report.corrupt.push_back(where + ": not a regular file or directory (nothing the store writes)");
    }
  }
  return report;
}

// One walk: expired blobs and stale temp files go; the stats are recounted
// from what is there (files deleted or damaged from outside drift them);
// past the byte bound's eviction mark, the least recently kept blobs (their
// mtime is their last use, refreshed by put, keep and get) go too.
std::uint64_t fs_blob_store::gc(std::uint64_t max_removals) {
  const auto now = options_.now();
  const bool evicting = over_percent(evict_at_percent);
  // The max_removals least recently kept blobs, newest on top (the one to drop).
  std::priority_queue<eviction_candidate, std::vector<eviction_candidate>, newest_on_top> oldest;
  const auto counted_bytes = stored_bytes_.load(), counted_objects = objects_.load();
  std::uint64_t removed = 0, removed_bytes = 0, seen_objects = 0, seen_bytes = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(options_.root, ec), end;
  for (; !ec && it != end && removed < max_removals; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec)) continue;
    const auto& path = it->path();
    const auto name = path.filename().string();
    const auto used = mtime_of(path);
    if (!name.ends_with(".blob")) {
      if (name.find(".tmp.") != std::string::npos && now - used > 3600) fs::remove(path, type_ec);
      continue;
    }
    auto size = it->file_size(type_ec);
    if (type_ec) size = 0;
    if (now - used > options_.ttl_seconds) {
      if (remove_blob(path, size)) ++removed, removed_bytes += size;
      continue;
    }
    ++seen_objects, seen_bytes += size;
    if (!evicting) continue;
    oldest.push({used, size, path});
    if (oldest.size() > max_removals) oldest.pop();
  }
  if (!ec && it == end) recount(counted_objects - std::min(counted_objects, removed), counted_bytes - std::min(counted_bytes, removed_bytes),
                                seen_objects, seen_bytes);
  std::vector<eviction_candidate> order;
  for (; !oldest.empty(); oldest.pop()) order.push_back(oldest.top());
  for (auto c = order.rbegin(); c != order.rend() && removed < max_removals && over_percent(evict_to_percent); ++c)
    if (remove_blob(c->path, c->bytes)) ++removed;
  return removed;
}

// The walk saw `seen` where the counters expected `expected`: the difference
// is what changed behind the store's back. Puts during the walk stay counted.
void fs_blob_store::recount(std::uint64_t expected_objects, std::uint64_t expected_bytes, std::uint64_t seen_objects,
                            std::uint64_t seen_bytes) {
  auto shift = [](std::atomic<std::uint64_t>& counter, std::uint64_t expected, std::uint64_t seen) {
    if (seen >= expected) return void(counter.fetch_add(seen - expected));
    auto now_value = counter.load();
    while (!counter.compare_exchange_weak(now_value, now_value - std::min(now_value, expected - seen))) {
    }
  };
  shift(objects_, expected_objects, seen_objects);
  shift(stored_bytes_, expected_bytes, seen_bytes);
}

bool fs_blob_store::over_percent(std::uint64_t percent) const {
  return options_.max_bytes && stored_bytes_.load() > options_.max_bytes / 100 * percent;
}

bool fs_blob_store::remove_blob(const fs::path& path, std::uint64_t size) {
  forget_confirmation(key_of_path(path));  // what gc removes is never taken as there
  std::error_code ec;
  if (!fs::remove(path, ec) || ec) return false;
  auto objects = objects_.load();
  while (!objects_.compare_exchange_weak(objects, objects - std::min<std::uint64_t>(objects, 1))) {
  }
  account(0, size, false);
  return true;
}

store_stats fs_blob_store::stats() { return {objects_.load(), stored_bytes_.load()}; }

void fs_blob_store::remove(std::string_view tenant, std::string_view hash) {
  if (!is_valid_tenant(tenant) || hash.size() != 64) return;
  std::error_code ec;
  const auto path = path_of(tenant, hash);
  const auto size = fs::file_size(path, ec);
  remove_blob(path, ec ? 0 : size);
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
