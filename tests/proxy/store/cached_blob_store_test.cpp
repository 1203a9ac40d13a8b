// The local cache tier in front of a remote store: writes reach the remote
// store first, reads are served (re-hashed) from the cache, a damaged cache
// file is only a miss, the byte budget evicts least recently used blobs, and
// re-offloads reach the remote store once per refresh interval.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "proxy/store/cached_blob_store.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"

using namespace gistproxy::rewrite;
using namespace gistproxy::store;
namespace fs = std::filesystem;

namespace {

// A remote store that counts its calls and can refuse writes.
class counting_remote final : public blob_store {
 public:
  explicit counting_remote(clock_fn now) : inner_(std::move(now)) {}
  put_result put(std::string_view b, const blob_meta& m) override {
    ++puts;
    if (down) return {blob_error::io, false, "S3 unreachable"};
    return inner_.put(b, m);
  }
  put_result put_encoded(std::string_view b, std::string_view encoded, const blob_meta& m) override {
    last_encoded = std::string(encoded);
    return put(b, m);
  }
  std::string last_encoded;
  bool contains(std::string_view t, std::string_view h) override { return inner_.contains(t, h); }
  get_result get(std::string_view t, std::string_view p) override {
    ++gets;
    if (down) return {blob_error::io, {}, {}, "S3 unreachable"};
    return inner_.get(t, p);
  }
  verify_report verify() override { return inner_.verify(); }
  std::uint64_t gc(std::uint64_t n) override { return inner_.gc(n); }
  store_stats stats() override { return inner_.stats(); }
  int puts = 0, gets = 0;
  bool down = false;

 private:
  memory_blob_store inner_;
};

struct tier {
  std::int64_t now = 1'700'000'000;
  fs::path dir = fs::temp_directory_path() / ("gp-cache-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  counting_remote* remote = nullptr;
  std::unique_ptr<cached_blob_store> store;
  explicit tier(std::uint64_t budget = 1 << 20) { open(budget); }
  void open(std::uint64_t budget) {
    auto r = std::make_unique<counting_remote>([this] { return now; });
    remote = r.get();
    fs_store_options local{dir, 3, 1 << 20, std::int64_t(1) << 40, [this] { return now; }};
    cache_options o;
    o.max_bytes = budget;
    o.now = [this] { return now; };
    store = std::make_unique<cached_blob_store>(std::move(r), std::make_unique<fs_blob_store>(local), o);
  }
  ~tier() { fs::remove_all(dir); }
};

std::string noise(int seed, std::size_t n) {  // incompressible, so sizes on disk are predictable
  std::string s(n, '\0');
  std::uint64_t x = 0x9E3779B97F4A7C15ull * std::uint64_t(seed + 1);
  for (auto& c : s) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = char(x & 0xff);
  }
  return s;
}

blob_meta meta_of(std::string_view b) { return {sha256_hex(b), b.size(), "text", 0, "t1", "cat"}; }

}  // namespace

TEST_CASE("cache tier: a write reaches the remote store first, and a refused write caches nothing") {
  tier t;
  auto a = noise(1, 4000);
  t.remote->down = true;
  CHECK(t.store->put(a, meta_of(a)).error == blob_error::io);
  CHECK(t.store->cached_bytes() == 0);
  t.remote->down = false;
  CHECK(t.store->put(a, meta_of(a)).error == blob_error::none);
  CHECK(t.remote->puts == 2);
  CHECK(t.store->cached_bytes() > 0);
  // Compressed once: the cache file holds exactly the stored form the remote store was given.
  std::ifstream file(t.dir / "t1" / sha256_hex(a).substr(0, 2) / (sha256_hex(a) + ".blob"), std::ios::binary);
  std::string on_disk((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_FALSE(t.remote->last_encoded.empty());
  CHECK(on_disk == t.remote->last_encoded);
}

TEST_CASE("cache tier: reads come from the cache without the remote store, and survive it being down") {
  tier t;
  auto a = noise(2, 4000);
  REQUIRE(t.store->put(a, meta_of(a)).error == blob_error::none);
  t.remote->down = true;
  auto got = t.store->get("t1", sha256_hex(a).substr(0, 16));
  REQUIRE(got.error == blob_error::none);
  CHECK(got.bytes == a);
  CHECK(t.remote->gets == 0);
}

TEST_CASE("cache tier: a damaged cache file is a miss, refetched from the remote store and cached again") {
  tier t;
  auto a = noise(3, 4000);
  REQUIRE(t.store->put(a, meta_of(a)).error == blob_error::none);
  auto path = t.dir / "t1" / sha256_hex(a).substr(0, 2) / (sha256_hex(a) + ".blob");
  REQUIRE(fs::exists(path));
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('\x7f');
  }
  auto got = t.store->get("t1", sha256_hex(a));
  REQUIRE(got.error == blob_error::none);
  CHECK(got.bytes == a);
  CHECK(t.remote->gets == 1);
  t.remote->down = true;
  CHECK(t.store->get("t1", sha256_hex(a)).bytes == a);  // the repaired copy serves now
}

TEST_CASE("cache tier: past its budget the least recently used blob leaves the cache, not the bucket") {
  tier t(10'000);  // room for two 4 KB blobs
  auto a = noise(4, 4000), b = noise(5, 4000), c = noise(6, 4000);
  REQUIRE(t.store->put(a, meta_of(a)).error == blob_error::none);
  REQUIRE(t.store->put(b, meta_of(b)).error == blob_error::none);
  REQUIRE(t.store->get("t1", sha256_hex(a)).error == blob_error::none);  // a is now more recent than b
  REQUIRE(t.store->put(c, meta_of(c)).error == blob_error::none);
  CHECK(t.store->cached_bytes() <= 10'000);
  t.remote->down = true;
  CHECK(t.store->get("t1", sha256_hex(a)).error == blob_error::none);
  CHECK(t.store->get("t1", sha256_hex(c)).error == blob_error::none);
  CHECK(t.store->get("t1", sha256_hex(b)).error == blob_error::io);  // evicted: only the bucket has it
  t.remote->down = false;
  CHECK(t.store->get("t1", sha256_hex(b)).bytes == b);
}

TEST_CASE("cache tier: re-offloads skip the remote store, except once per refresh interval") {
  tier t;
  auto a = noise(7, 4000);
  REQUIRE(t.store->put(a, meta_of(a)).error == blob_error::none);
  CHECK(t.store->put(a, meta_of(a)).deduplicated);
  CHECK(t.remote->puts == 1);
  t.now += 86400;
  t.store->put(a, meta_of(a));
  CHECK(t.remote->puts == 2);  // refreshes the object's age in the bucket
}

TEST_CASE("cache tier: a restart finds what the cache holds and keeps it within the budget") {
  tier t;
  auto a = noise(8, 4000), b = noise(9, 4000);
  REQUIRE(t.store->put(a, meta_of(a)).error == blob_error::none);
  t.now += 10;
  REQUIRE(t.store->put(b, meta_of(b)).error == blob_error::none);
  t.open(6000);  // a new process with a smaller budget: only the most recent fits
  CHECK(t.store->cached_bytes() <= 6000);
  t.remote->down = true;
  CHECK(t.store->get("t1", sha256_hex(b)).error == blob_error::none);
  CHECK(t.store->get("t1", sha256_hex(a)).error == blob_error::io);
}
