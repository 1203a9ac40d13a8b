// Helpers the `gistproxy wrap` tests share: stand-in agents (small scripts
// named like a real agent, first on PATH), the environment they run in, and
// what a test reads back from the files they leave.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/integration/harness.hpp"

extern char** environ;

namespace gistproxy::testing {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The environment of a stand-in agent named like a real one, first on PATH:
// ours less the variables a test sets itself, plus `extra`.
inline std::vector<std::string> stand_in_env(const std::filesystem::path& bin, const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    if (v.rfind("XDG_", 0) == 0 || v.rfind("PATH=", 0) == 0 || v.rfind("HOME=", 0) == 0 ||
        v.rfind("ANTHROPIC_", 0) == 0 || v.rfind("CLINE_", 0) == 0 || v.rfind("OPENAI_", 0) == 0 ||
        v.rfind("CODEX_", 0) == 0 || v.rfind("OPENCODE_", 0) == 0 || v.rfind("TMPDIR=", 0) == 0)
      continue;
    env.emplace_back(v);
  }
  const char* path = std::getenv("PATH");
  env.push_back("PATH=" + bin.string() + ":" + (path ? path : "/usr/bin:/bin"));
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

inline void write_stand_in(const std::filesystem::path& bin, const std::string& name, const std::string& script) {
  std::filesystem::create_directories(bin);
  std::ofstream(bin / name) << script;
  std::filesystem::permissions(bin / name, std::filesystem::perms::owner_all);
}

// Nothing answers at the base URL's port any more.
inline bool refuses(const std::string& base) {
  auto port = std::uint16_t(std::stoi(base.substr(base.rfind(':') + 1)));
  return !http_request(port, "GET", "/healthz").ok();
}

// Waits (bounded) until `done` holds.
template <class Done>
bool eventually(Done done, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The processes whose parent is `parent` (Linux /proc).
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto stat = slurp(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(pid_t(std::stoi(name)));
  }
  return out;
}

// Gone, or a zombie no one reaps (its parent died): it runs no more.
inline bool has_exited(pid_t pid) {
  const auto stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || (close + 2 < stat.size() && (stat[close + 2] == 'Z' || stat[close + 2] == 'X'));
}

// The run overlays wrap left in a cache folder.
inline std::vector<std::filesystem::path> overlays_in(const std::filesystem::path& cache) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(cache / "gistproxy", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("overlay-", 0) == 0) out.push_back(it->path());
  return out;
}

}  // namespace gistproxy::testing
