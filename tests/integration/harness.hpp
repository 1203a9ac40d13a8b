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
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/http_client.hpp"
#include "tests/support/mock_upstream.hpp"
#include "tests/support/proxy_process.hpp"

namespace gistproxy::testing {

// A path no other test process has used: the directory is made fresh by
// mkdtemp once per process. (Named by pid alone, a reused pid reopened an
// earlier run's span log, which the proxy appends to: foreign spans.)
inline std::filesystem::path temp_path(const std::string& name) {
  static int counter = 0;
  static const std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "gistproxy-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    return std::filesystem::path(pattern);
  }();
  return dir / (std::to_string(++counter) + "-" + name);
}

// Spans are written after the response reached the client: tests wait
// (bounded) for the spans they assert on, never assume they are there.
// Waits until `done(spans)` holds for the span log; returns what it holds.
// A line still being written is not a span yet.
template <class Done>
std::vector<nlohmann::json> read_spans_until(const std::filesystem::path& path, Done done,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<nlohmann::json> spans;
  do {
    spans.clear();
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      auto span = nlohmann::json::parse(line, nullptr, false);
      if (span.is_object()) spans.push_back(std::move(span));
    }
    if (done(spans)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return spans;
}

// Waits until the span log holds at least `count` spans.
inline std::vector<nlohmann::json> read_spans(const std::filesystem::path& path, std::size_t count,
                                              std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  return read_spans_until(path, [count](const auto& spans) { return spans.size() >= count; }, timeout);
}

inline std::size_t count_named(const std::vector<nlohmann::json>& spans, const std::string& name) {
  std::size_t n = 0;
  for (const auto& s : spans) n += s.value("name", "") == name;
  return n;
}

// The spans of one name: a test asserts how many it expected before it
// checks them, so a span that never arrived fails instead of passing vacuously.
inline std::vector<nlohmann::json> spans_named(const std::vector<nlohmann::json>& spans, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& s : spans)
    if (s.value("name", "") == name) out.push_back(s);
  return out;
}

// Metrics are recorded after the response reached the client: waits
// (bounded) until /metrics holds every needle; returns the last body.
inline std::string metrics_with(std::uint16_t admin_port, const std::vector<std::string>& needles,
                                std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string body;
  for (;;) {
    body = http_request(admin_port, "GET", "/metrics").body;
    bool all = true;
    for (const auto& n : needles) all = all && body.find(n) != std::string::npos;
    if (all || std::chrono::steady_clock::now() >= deadline) return body;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The value of the series whose text (name and labels) is exactly `series`
// in a /metrics body; -1 when it is not there.
inline double series_value(const std::string& metrics, const std::string& series) {
  auto pos = metrics.find("\n" + series + " ");
  if (pos == std::string::npos) return -1;
  return std::stod(metrics.substr(pos + series.size() + 2));
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
