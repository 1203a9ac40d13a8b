// The store as a shared resource: --store-max-bytes (the filesystem store
// counts its bytes from a scan at start, refuses new blobs past the bound,
// and gc evicts the least recently kept), and one directory fsync per
// directory for a request's batch of blobs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <random>
#include <set>

#include "proxy/store/blob_io.hpp"
#include "proxy/store/fs_blob_store.hpp"
#include "rewrite/blob/digest.hpp"

using namespace gistproxy::rewrite;
using namespace gistproxy::store;
namespace fs = std::filesystem;

namespace {

struct bounded_store {
  fs::path root = fs::temp_directory_path() / ("gp-bound-" + std::to_string(::getpid()) + "-" +
                                               std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::int64_t now = 1'700'000'000;
  std::uint64_t max_bytes;
  std::unique_ptr<fs_blob_store> store;
  explicit bounded_store(std::uint64_t bound) : max_bytes(bound) { restart(); }
  ~bounded_store() { fs::remove_all(root); }
  void restart() {
    fs_store_options o{root, 3, 1 << 20, 30 * 86400, [this] { return now; }};
    o.max_bytes = max_bytes;
    store = std::make_unique<fs_blob_store>(o);
  }
};

// Bytes zstd cannot shrink: each blob's file is about its size.
std::string incompressible(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = char(rng());
  return s;
}

blob_meta meta_for(std::string_view bytes) { return {sha256_hex(bytes), bytes.size(), "text", 0, "t1", "cat"}; }

}  // namespace

TEST_CASE("past --store-max-bytes a new blob is refused as full while stored bytes still dedupe (also after a restart)") {
  bounded_store b(25'000);
  const auto first = incompressible(10'000, 1), second = incompressible(10'000, 2), third = incompressible(10'000, 3);
  REQUIRE(b.store->put(first, meta_for(first)).error == blob_error::none);
  REQUIRE(b.store->put(second, meta_for(second)).error == blob_error::none);
  if (GENERATE(false, true)) b.restart();  // the count at start is what is on disk
  auto refused = b.store->put(third, meta_for(third));
  CHECK(refused.error == blob_error::full);  // was: written, whatever the disk held
  CHECK_FALSE(fs::exists(b.store->path_of("t1", meta_for(third).hash)));
  CHECK(b.store->stats().objects == 2);
  CHECK(b.store->stats().stored_bytes <= b.max_bytes);
  CHECK(b.store->put(first, meta_for(first)).deduplicated);  // what is stored stays usable
  CHECK(b.store->get("t1", meta_for(second).hash).bytes == second);
}

TEST_CASE("gc evicts the least recently kept blobs down to the bound's low mark and the blobs in use stay") {
  bounded_store b(100'000);
  std::vector<std::string> blobs;
  for (unsigned i = 0; i < 9; ++i) {
    blobs.push_back(incompressible(10'000, 10 + i));
    REQUIRE(b.store->put(blobs.back(), meta_for(blobs.back())).error == blob_error::none);
    b.now += 2 * 3600;  // each blob last used two hours after the one before
  }
  // The oldest two are used again now (a later turn kept them).
  REQUIRE(b.store->get("t1", meta_for(blobs[0]).hash).error == blob_error::none);
  REQUIRE(b.store->get("t1", meta_for(blobs[1]).hash).error == blob_error::none);
  REQUIRE(b.store->wants_gc());  // past 90% of the bound
  const auto removed = b.store->gc(1000);
  CHECK(removed >= 1);
  CHECK(b.store->stats().stored_bytes <= b.max_bytes * 80 / 100);
  CHECK_FALSE(b.store->wants_gc());
  // Least recently kept first: blobs[2], blobs[3], ... went; the two used again stayed.
  CHECK(b.store->get("t1", meta_for(blobs[0]).hash).error == blob_error::none);
  CHECK(b.store->get("t1", meta_for(blobs[1]).hash).error == blob_error::none);
  CHECK(b.store->get("t1", meta_for(blobs[2]).hash).error == blob_error::not_found);
  CHECK(b.store->get("t1", meta_for(blobs[8]).hash).error == blob_error::none);
  CHECK(b.store->stats().objects == 9 - removed);
}

TEST_CASE("gc recounts a full store whose files were deleted behind its back so new blobs are stored again") {
  bounded_store b(25'000);
  const auto first = incompressible(10'000, 1), second = incompressible(10'000, 2), third = incompressible(10'000, 3);
  REQUIRE(b.store->put(first, meta_for(first)).error == blob_error::none);
  REQUIRE(b.store->put(second, meta_for(second)).error == blob_error::none);
  fs::remove(b.store->path_of("t1", meta_for(first).hash));  // `blob gc` from cron, or by hand
  REQUIRE(b.store->put(third, meta_for(third)).error == blob_error::full);  // the count does not know yet
  b.store->gc(1000);
  CHECK(b.store->stats().objects == 1);
  CHECK(b.store->put(third, meta_for(third)).error == blob_error::none);
}

TEST_CASE("a request's batch of puts fsyncs each blob directory once when the batch ends (not once a blob)") {
  bounded_store b(0);  // no bound
  std::set<std::string> directories;
  const auto before = directory_syncs();
  {
    directory_sync_batch batch;
    for (unsigned i = 0; i < 300; ++i) {  // more blobs than a tenant has directories
      const auto bytes = "output " + std::to_string(i);
      REQUIRE(b.store->put(bytes, meta_for(bytes)).error == blob_error::none);
      directories.insert(meta_for(bytes).hash.substr(0, 2));
    }
    CHECK(directory_syncs() == before);  // none yet: the references have not left
  }
  CHECK(directory_syncs() - before == directories.size());  // was: 300, one per blob
  REQUIRE(directories.size() <= 256);
  // Outside a batch every put still syncs its directory before it returns.
  const std::string alone = "an output stored alone";
  REQUIRE(b.store->put(alone, meta_for(alone)).error == blob_error::none);
  CHECK(directory_syncs() - before == directories.size() + 1);
}
