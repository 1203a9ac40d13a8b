// The blob file reader on fuzzed file contents: any damage is an integrity
// failure (never bytes that do not hash to the handle, never a crash).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "rewrite/blob/digest.hpp"
#include "proxy/store/fs_blob_store.hpp"

using namespace gistproxy::rewrite;
using namespace gistproxy::store;
namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fs::path root = fs::temp_directory_path() / ("gistproxy-blob-fuzz-" + std::to_string(::getpid()));
  static const std::string hash = sha256_hex("the blob");
  static fs_blob_store store([] {
    fs_store_options o;
    o.root = root;
    o.max_blob_bytes = 1 << 20;
    return o;
  }());
  auto dir = root / "t" / hash.substr(0, 2);
  fs::create_directories(dir);
  std::ofstream(dir / (hash + ".blob"), std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  auto r = store.get("t", hash);
  if (r.error == blob_error::none && sha256_hex(r.bytes) != hash) __builtin_trap();
  store.verify();
  return 0;
}
