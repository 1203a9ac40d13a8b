#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>
#include <sys/stat.h>
#include <zstd.h>

#include "rewrite/blob/digest.hpp"
#include "proxy/store/fs_blob_store.hpp"
#include "rewrite/blob/memory_blob_store.hpp"

using namespace gistproxy::rewrite;
using namespace gistproxy::store;
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

TEST_CASE("the store reads only regular files it wrote: links, FIFOs and devices are integrity failures, never a hang") {
  temp_store t;
  std::string bytes(2000, 'q');
  auto m = meta_for(bytes);
  auto dir = t.root / "t1" / m.hash.substr(0, 2);
  fs::create_directories(dir);
  auto path = dir / (m.hash + ".blob");
  SECTION("a FIFO") { REQUIRE(::mkfifo(path.c_str(), 0600) == 0); }
  SECTION("a symlink to a device") { fs::create_symlink("/dev/zero", path); }
  SECTION("a symlink to a real blob") {
    std::string other(3000, 'r');
    REQUIRE(t.store.put(other, meta_for(other)).error == blob_error::none);
    auto m2 = meta_for(other);
    fs::create_symlink(t.root / "t1" / m2.hash.substr(0, 2) / (m2.hash + ".blob"), path);
  }
  SECTION("a directory") { fs::create_directories(path); }
  auto r = t.store.get("t1", m.hash);
  CHECK(r.error == blob_error::integrity);
  CHECK(r.bytes.empty());
  auto report = t.store.verify();
  bool named = false;
  for (const auto& c : report.corrupt) named |= c.find(m.hash) != std::string::npos;
  INFO(report.checked << " checked; " << (report.corrupt.empty() ? std::string() : report.corrupt[0]));
  CHECK(named);
}

TEST_CASE("a blob header with members of the wrong type is an integrity failure that verify names") {
  temp_store t;
  std::string bytes(2000, 'h');
  auto m = meta_for(bytes);
  REQUIRE(t.store.put(bytes, m).error == blob_error::none);
  auto path = t.root / "t1" / m.hash.substr(0, 2) / (m.hash + ".blob");
  std::string file;
  {
    std::ifstream in(path, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto nl = file.find('\n');
  auto header = GENERATE(as<std::string>{}, R"({"hash":7,"size":2000})", R"({"hash":"x","size":"2000"})",
                         R"({"hash":"x","size":-1})", R"([1,2])", R"({"hash":"x","size":2000,"tool":{"a":1}})",
                         std::string(100000, '[') + std::string(100000, ']'));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "GPB1 " << header << file.substr(nl);
  auto r = t.store.get("t1", m.hash);
  CHECK(r.error == blob_error::integrity);
  auto report = t.store.verify();
  REQUIRE(report.corrupt.size() == 1);
  CHECK(report.corrupt[0].find(m.hash) != std::string::npos);
}

TEST_CASE("with a TTL under an hour a blob used moments ago is not expired: its age keeps pace with the TTL") {
  temp_store t(60);
  auto m = meta_for("used each half minute");
  t.store.put("used each half minute", m);
  for (int i = 0; i < 6; ++i) {
    t.now += 30;
    REQUIRE(t.store.get("t1", m.hash).error == blob_error::none);  // was: expired at 60 s, refreshed hourly only
  }
  t.now += 30;
  CHECK(t.store.gc(100) == 0);
  CHECK(t.store.get("t1", m.hash).error == blob_error::none);
  CHECK(refresh_interval(60, 3600) == 15);
  CHECK(refresh_interval(7 * 86400, 3600) == 3600);
  CHECK(refresh_interval(2, 3600) == 1);
}

TEST_CASE("keep() confirms a stored blob, trusts it for a few seconds, then notices one deleted from outside") {
  temp_store t(7 * 86400);
  const std::string bytes = "an offloaded output, kept turn after turn";
  const auto meta = meta_for(bytes);
  CHECK_FALSE(t.store.keep("t1", meta.hash));  // never stored: not kept
  REQUIRE(t.store.put(bytes, meta).error == blob_error::none);
  CHECK(t.store.keep("t1", meta.hash));
  CHECK_FALSE(t.store.keep("t2", meta.hash));  // another tenant's handle
  // Deleted from outside the process (by hand): trusted within the window...
  fs::remove(t.root / "t1" / meta.hash.substr(0, 2) / (meta.hash + ".blob"));
  t.now += 5;
  CHECK(t.store.keep("t1", meta.hash));
  // ...and found missing after it, so the engine stores the bytes again.
  t.now += 10;
  CHECK_FALSE(t.store.keep("t1", meta.hash));
  REQUIRE(t.store.put(bytes, meta).error == blob_error::none);
  CHECK(t.store.get("t1", meta.hash).bytes == bytes);
  // What the store removes itself is never trusted afterwards.
  t.store.remove("t1", meta.hash);
  CHECK_FALSE(t.store.keep("t1", meta.hash));
}

// Tool outputs are private: whatever the umask, what the store creates is
// the owner's alone (the root and its missing parents, the tenant and hash
// folders, each blob file).
TEST_CASE("the store's folders are 0700 and its blob files 0600 whatever the umask") {
  const auto old_umask = ::umask(0);  // the widest: a store that relied on the umask would be 0777/0666
  const auto base = fs::temp_directory_path() / ("gp-private-" + std::to_string(::getpid()));
  const auto root = base / "nested" / "store";
  fs::remove_all(base);
  {
    fs_blob_store store(fs_store_options{root, 3, 1 << 20, 3600, [] { return std::int64_t(1'700'000'000); }});
    const std::string bytes(3000, 'p');
    const auto m = meta_for(bytes);
    REQUIRE(store.put(bytes, m).error == blob_error::none);
    const auto file = store.path_of("t1", m.hash);
    auto mode = [](const fs::path& p) {
      struct stat st {};
      REQUIRE(::stat(p.c_str(), &st) == 0);
      return st.st_mode & 07777;
    };
    for (const auto& dir : {base, base / "nested", root, root / "t1", file.parent_path()}) {
      INFO(dir);
      CHECK(mode(dir) == 0700);
    }
    CHECK(mode(file) == 0600);
  }
  ::umask(old_umask);
  fs::remove_all(base);
}
