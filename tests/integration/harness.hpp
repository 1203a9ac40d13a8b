// Shared helpers for integration tests: temp files, span-log polling and a
// Prometheus text-format check.
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/http_client.hpp"
#include "tests/support/mock_upstream.hpp"
#include "tests/support/proxy_process.hpp"

namespace gistproxy::testing {

inline std::filesystem::path temp_path(const std::string& name) {
  static int counter = 0;
  auto dir = std::filesystem::temp_directory_path() / ("gistproxy-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / (std::to_string(++counter) + "-" + name);
}

// Waits (bounded) until the span log holds at least `count` spans; returns them.
inline std::vector<nlohmann::json> read_spans(const std::filesystem::path& path, std::size_t count,
                                              std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<nlohmann::json> spans;
  do {
    spans.clear();
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) spans.push_back(nlohmann::json::parse(line));
    if (spans.size() >= count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return spans;
}

// Returns an empty string if `text` is valid Prometheus text exposition,
// else the first offending line.
inline std::string prometheus_text_problem(const std::string& text) {
  static const std::regex sample(R"re(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.eE+-]+|\+Inf|-Inf|NaN)$)re");
  static const std::regex type_line(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
  std::set<std::string> typed;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (std::regex_match(line, m, type_line)) {
      typed.insert(m[1]);
      continue;
    }
    if (!std::regex_match(line, m, sample)) return line;
    std::string name = m[1];
    bool known = typed.count(name);
    for (auto suffix : {"_bucket", "_sum", "_count"})
      if (name.size() > std::strlen(suffix) && name.ends_with(suffix))
        known |= typed.count(name.substr(0, name.size() - std::strlen(suffix))) > 0;
    if (!known) return "sample without # TYPE: " + line;
  }
  return {};
}

}  // namespace gistproxy::testing
