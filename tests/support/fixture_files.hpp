// Reading test inputs: a whole file, or one under tests/fixtures
// (GISTPROXY_FIXTURES, set by tests/CMakeLists.txt). Header-only.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gistproxy::testing {

inline std::string read_whole_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

#ifdef GISTPROXY_FIXTURES
inline std::string read_fixture(const std::string& name) {
  return read_whole_file(std::filesystem::path(GISTPROXY_FIXTURES) / name);
}
#endif

}  // namespace gistproxy::testing
