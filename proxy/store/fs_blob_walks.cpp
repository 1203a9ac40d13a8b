// The filesystem store's walks over every blob file: verify, gc, the cache
// tier's listing and removal, and the count at start.
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

}  // namespace

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
    if (expired) removed += remove_blob(it->path(), size);
    else fs::remove(it->path(), type_ec);
  }
  return removed;
}

bool fs_blob_store::remove_blob(const fs::path& path, std::uint64_t size) {
  forget_confirmation(key_of_path(path));  // what gc removes is never taken as there
  std::error_code ec;
  if (!fs::remove(path, ec) || ec) return false;
  auto objects = objects_.load();
  while (!objects_.compare_exchange_weak(objects, objects - std::min<std::uint64_t>(objects, 1))) {
  }
  stored_bytes_.fetch_sub(std::min<std::uint64_t>(stored_bytes_.load(), size));
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
