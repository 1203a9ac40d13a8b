#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>
#include <zstd.h>

#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/fs_blob_store.hpp"
#include "rewrite/blob/memory_blob_store.hpp"

using namespace gistproxy::rewrite;
namespace fs = std::filesystem;

namespace {

struct temp_store {
  fs::path root;
  std::int64_t now = 1'700'000'000;
  fs_blob_store store;
  explicit temp_store(std::int64_t ttl = 3600)
      : root(fs::temp_directory_path() / ("gp-store-" + std::to_string(::getpid()) + "-" +
                                          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))),
        store(fs_store_options{root, 3, 1 << 20, ttl, [this] { return now; }}) {}
  ~temp_store() { fs::remove_all(root); }
};

blob_meta meta_for(std::string_view bytes, std::string tenant = "t1") {
  return {sha256_hex(bytes), bytes.size(), "text", 0, std::move(tenant), "read_file"};
}

}  // namespace

TEST_CASE("a stored blob comes back byte for byte, by full handle or a 16-hex prefix") {
  temp_store t;
  std::string bytes = "line one\nline two\r\n\0binary\xff\n";
  bytes += std::string(5000, 'x');
  auto m = meta_for(bytes);
  REQUIRE(t.store.put(bytes, m).error == blob_error::none);
  for (auto handle : {m.hash, m.hash.substr(0, 16)}) {
    auto r = t.store.get("t1", handle);
    REQUIRE(r.error == blob_error::none);
    CHECK(r.bytes == bytes);
    CHECK(r.meta.tool_name == "read_file");
    CHECK(r.meta.size == bytes.size());
  }
  CHECK(t.store.stats().objects == 1);
}

TEST_CASE("a second put of the same bytes writes nothing") {
  temp_store t;
  auto m = meta_for("same bytes");
  auto first = t.store.put("same bytes", m);
  auto path = t.store.path_of("t1", m.hash);
  auto written = fs::last_write_time(path);
  auto second = t.store.put("same bytes", m);
  CHECK_FALSE(first.deduplicated);
  CHECK(second.deduplicated);
  CHECK(fs::last_write_time(path) == written);
  CHECK(t.store.stats().objects == 1);
}

TEST_CASE("corrupted bytes on disk are an integrity error, never returned") {
  temp_store t;
  std::string bytes(20000, 'a');
  auto m = meta_for(bytes);
  REQUIRE(t.store.put(bytes, m).error == blob_error::none);
  auto path = t.store.path_of("t1", m.hash);
  // Replace the stored frame with one of different bytes of the same length.
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), {});
  in.close();
  auto header = file.substr(0, file.find('\n') + 1);
  std::string other(20000, 'b');
  std::string frame(ZSTD_compressBound(other.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), other.data(), other.size(), 3));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << header << frame;
  auto r = t.store.get("t1", m.hash);
  CHECK(r.error == blob_error::integrity);
  CHECK(r.bytes.empty());
  auto report = t.store.verify();
  CHECK(report.checked == 1);
  CHECK(report.corrupt.size() == 1);
}

TEST_CASE("a flipped byte in the compressed frame is caught") {
  temp_store t;
  std::string bytes = "some log output\n";
  for (int i = 0; i < 500; ++i) bytes += "INFO step " + std::to_string(i) + " ok\n";
  auto m = meta_for(bytes);
  REQUIRE(t.store.put(bytes, m).error == blob_error::none);
  auto path = t.store.path_of("t1", m.hash);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(-5, std::ios::end);
  f.put('\x42');
  f.close();
  CHECK(t.store.get("t1", m.hash).error == blob_error::integrity);
}

TEST_CASE("a blob is scoped to its tenant") {
  temp_store t;
  auto m = meta_for("tenant one's output", "tenant1");
  REQUIRE(t.store.put("tenant one's output", m).error == blob_error::none);
  CHECK(t.store.get("tenant1", m.hash).error == blob_error::none);
  CHECK(t.store.get("tenant2", m.hash).error == blob_error::not_found);
  CHECK(t.store.get("tenant2", m.hash.substr(0, 16)).error == blob_error::not_found);
  CHECK_FALSE(t.store.contains("tenant2", m.hash));
}

TEST_CASE("blobs expire after the TTL unless used, and gc removes them") {
  temp_store t(3600 * 24);
  auto used = meta_for("used often"), idle = meta_for("left alone");
  t.store.put("used often", used);
  t.store.put("left alone", idle);
  t.now += 3600 * 20;
  REQUIRE(t.store.get("t1", used.hash).error == blob_error::none);  // refreshes its TTL
  t.now += 3600 * 20;
  CHECK(t.store.get("t1", used.hash).error == blob_error::none);
  CHECK(t.store.get("t1", idle.hash).error == blob_error::expired);
  CHECK(t.store.gc(100) == 1);
  CHECK(t.store.get("t1", idle.hash).error == blob_error::not_found);
  CHECK(t.store.stats().objects == 1);
}

TEST_CASE("blobs over the size cap are refused, not truncated") {
  temp_store t;
  std::string big((1 << 20) + 1, 'z');
  CHECK(t.store.put(big, meta_for(big)).error == blob_error::too_large);
  CHECK(t.store.stats().objects == 0);
}

TEST_CASE("concurrent writers of the same bytes leave one intact blob") {
  temp_store t;
  std::string bytes(300000, 'q');
  auto m = meta_for(bytes);
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i) writers.emplace_back([&] { t.store.put(bytes, m); });
  for (auto& w : writers) w.join();
  auto r = t.store.get("t1", m.hash);
  REQUIRE(r.error == blob_error::none);
  CHECK(r.bytes == bytes);
  std::size_t files = 0;
  for (auto& e : fs::recursive_directory_iterator(t.root)) files += e.is_regular_file();
  CHECK(files == 1);  // no temp files left behind
}

TEST_CASE("bad handles and tenants are rejected without touching the filesystem") {
  temp_store t;
  CHECK(t.store.get("t1", "short").error == blob_error::not_found);
  CHECK(t.store.get("t1", "ABCDEF0123456789").error == blob_error::not_found);  // uppercase
  CHECK(t.store.get("../etc", "0123456789abcdef").error == blob_error::not_found);
  CHECK(t.store.put("x", meta_for("x", "../escape")).error == blob_error::io);
}

TEST_CASE("the in-memory store honours the same contract") {
  std::int64_t now = 1000;
  memory_blob_store store([&] { return now; }, 100);
  auto m = meta_for("abc");
  CHECK_FALSE(store.put("abc", m).deduplicated);
  CHECK(store.put("abc", m).deduplicated);
  CHECK(store.writes() == 1);
  CHECK(store.get("t1", m.hash.substr(0, 20)).bytes == "abc");
  CHECK(store.get("t2", m.hash).error == blob_error::not_found);
  store.corrupt("t1", m.hash);
  CHECK(store.get("t1", m.hash).error == blob_error::integrity);
  now += 1000;
  CHECK(store.gc(10) == 1);
}
