// The fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput once on
// each file of the corpus folders (or files) named on the command line. The
// sanitizer build links the targets with this main and CTest replays every
// committed corpus, so each input that once found a bug keeps being checked
// under ASan and UBSan by the suite itself; `make fuzz` (clang, libFuzzer)
// is what searches for new ones.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// libFuzzer's own -max_len in scripts/fuzz: a longer corpus file is cut alike.
constexpr std::size_t max_input_bytes = 65536;

std::vector<std::filesystem::path> inputs_under(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(root)) return {root};
  for (const auto& entry : std::filesystem::directory_iterator(root))
    if (entry.is_regular_file()) files.push_back(entry.path());
  return files;
}

bool replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::string bytes;
  bytes.resize(max_input_bytes);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& file : inputs_under(argv[i])) {
      if (!replay(file)) {
        std::fprintf(stderr, "cannot read %s\n", file.c_str());
        return 1;
      }
      ++replayed;
    }
  }
  std::printf("replayed %zu inputs\n", replayed);
  // A corpus that ran nothing checked nothing.
  return replayed ? 0 : 1;
}
