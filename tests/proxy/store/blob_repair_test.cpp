// A blob file that went bad (damaged, truncated, deleted behind the store's
// back) is repaired by the next put of its bytes: the client re-sends them
// every turn, so the store never trusts a file for merely being there.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>

#include "proxy/store/fs_blob_store.hpp"
#include "rewrite/blob/digest.hpp"

using namespace gistproxy::rewrite;
using namespace gistproxy::store;
namespace fs = std::filesystem;

namespace {

// A store directory that outlives store instances: a new instance on the
// same root is a restart.
struct store_dir {
  fs::path root = fs::temp_directory_path() / ("gp-repair-" + std::to_string(::getpid()) + "-" +
                                               std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::int64_t now = 1'700'000'000;
  std::unique_ptr<fs_blob_store> store = open();
  ~store_dir() { fs::remove_all(root); }
  std::unique_ptr<fs_blob_store> open() {
    return std::make_unique<fs_blob_store>(fs_store_options{root, 3, 1 << 20, 7 * 86400, [this] { return now; }});
  }
  void restart() { store = open(); }
};

std::string log_lines() {
  std::string bytes;
  for (int i = 0; i < 2000; ++i) bytes += "INFO step " + std::to_string(i) + " ok\n";
  return bytes;
}

blob_meta meta_for(std::string_view bytes) { return {sha256_hex(bytes), bytes.size(), "log", 0, "t1", "run_tests"}; }

std::string read_whole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_whole(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("a put of its bytes replaces a truncated or emptied or extended or re-headed blob file (also after a restart)") {
  store_dir d;
  const auto bytes = log_lines();
  const auto meta = meta_for(bytes);
  REQUIRE(d.store->put(bytes, meta).error == blob_error::none);
  const auto path = d.store->path_of("t1", meta.hash);
  const auto good = read_whole(path);
  const auto damage = GENERATE(as<std::string>{}, "truncated", "emptied", "extended", "header");
  if (damage == "truncated") write_whole(path, good.substr(0, good.size() - 7));
  if (damage == "emptied") write_whole(path, "");
  if (damage == "extended") write_whole(path, good + "junk");
  if (damage == "header") write_whole(path, "GPB1 {}" + good.substr(good.find('\n')));
  const bool restart = GENERATE(false, true);
  if (restart) d.restart();
  INFO(damage << (restart ? ", after a restart" : ""));
  auto put = d.store->put(bytes, meta);
  REQUIRE(put.error == blob_error::none);
  CHECK_FALSE(put.deduplicated);  // was: the file existed, so nothing was written
  CHECK(put.found_damaged);       // an integrity failure nobody else saw (was: repaired unsaid)
  CHECK_FALSE(d.store->put(bytes, meta).found_damaged);  // repaired: the next put finds it whole
  auto r = d.store->get("t1", meta.hash);
  REQUIRE(r.error == blob_error::none);
  CHECK(r.bytes == bytes);
  CHECK(d.store->stats().objects == 1);
  CHECK(d.store->stats().stored_bytes == fs::file_size(path));
}

TEST_CASE("a blob a read found damaged is rewritten by the next put of its bytes though its file looks whole") {
  store_dir d;
  const auto bytes = log_lines();
  const auto meta = meta_for(bytes);
  REQUIRE(d.store->put(bytes, meta).error == blob_error::none);
  const auto path = d.store->path_of("t1", meta.hash);
  auto file = read_whole(path);
  file[file.size() - 40] ^= 0x5a;  // inside the compressed data: the frame's structure is intact
  write_whole(path, file);
  if (GENERATE(false, true)) d.restart();
  CHECK(d.store->put(bytes, meta).deduplicated);  // cheap checks cannot see a flip inside the data
  REQUIRE(d.store->get("t1", meta.hash).error == blob_error::integrity);
  CHECK_FALSE(d.store->keep("t1", meta.hash));  // a damaged blob is not confirmed, so the engine puts its bytes
  auto put = d.store->put(bytes, meta);
  REQUIRE(put.error == blob_error::none);
  CHECK_FALSE(put.deduplicated);
  CHECK_FALSE(put.found_damaged);  // the read found it, and counted it: not twice
  auto r = d.store->get("t1", meta.hash);
  REQUIRE(r.error == blob_error::none);
  CHECK(r.bytes == bytes);
  CHECK(d.store->keep("t1", meta.hash));
}

TEST_CASE("keep() does not confirm a blob whose file changed size since a put wrote it") {
  store_dir d;
  const auto bytes = log_lines();
  const auto meta = meta_for(bytes);
  REQUIRE(d.store->put(bytes, meta).error == blob_error::none);
  const auto path = d.store->path_of("t1", meta.hash);
  const auto good = read_whole(path);
  write_whole(path, good.substr(0, good.size() / 2));
  d.now += 60;  // past keep()'s trust: it looks at the file again
  CHECK_FALSE(d.store->keep("t1", meta.hash));  // was: a stat found a file, any file
  REQUIRE_FALSE(d.store->put(bytes, meta).deduplicated);
  CHECK(d.store->keep("t1", meta.hash));
  CHECK(d.store->get("t1", meta.hash).bytes == bytes);
}

TEST_CASE("a read that finds a blob deleted behind the store's back ends keep()'s trust in it at once") {
  store_dir d;
  const auto bytes = log_lines();
  const auto meta = meta_for(bytes);
  REQUIRE(d.store->put(bytes, meta).error == blob_error::none);
  REQUIRE(d.store->keep("t1", meta.hash));
  fs::remove(d.store->path_of("t1", meta.hash));
  CHECK(d.store->get("t1", meta.hash).error == blob_error::not_found);
  CHECK_FALSE(d.store->keep("t1", meta.hash));  // inside the trust window, yet asked again
  REQUIRE_FALSE(d.store->put(bytes, meta).deduplicated);
  CHECK(d.store->get("t1", meta.hash).bytes == bytes);
}

TEST_CASE("a read that finds a blob damaged or deleted moves losses(), which ends every remembered confirmation") {
  store_dir d;
  const auto bytes = log_lines();
  const auto meta = meta_for(bytes);
  REQUIRE(d.store->put(bytes, meta).error == blob_error::none);
  const auto path = d.store->path_of("t1", meta.hash);
  const auto before = d.store->losses();
  REQUIRE(d.store->get("t1", meta.hash).error == blob_error::none);
  CHECK(d.store->losses() == before);  // a good read loses nothing
  SECTION("damaged") {
    auto file = read_whole(path);
    file[file.size() - 40] ^= 0x5a;
    write_whole(path, file);
    REQUIRE(d.store->get("t1", meta.hash.substr(0, 16)).error == blob_error::integrity);
  }
  SECTION("deleted") {
    fs::remove(path);
    REQUIRE(d.store->get("t1", meta.hash).error == blob_error::not_found);
  }
  CHECK(d.store->losses() == before + 1);  // was: no way for a caller to know its confirmation is stale
  CHECK(d.store->get("t1", std::string(64, 'a')).error == blob_error::not_found);
  CHECK(d.store->losses() == before + 1);  // a handle nobody stored is no loss
}
