#include "tests/support/proxy_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cctype>
#include <regex>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace gistproxy::testing {

// GISTPROXY_TEST_BINARY runs the tests against another build (an earlier
// commit's binary: a new test is checked to fail on the code before its fix).
const char* gistproxy_binary() {
  const char* other = std::getenv("GISTPROXY_TEST_BINARY");
  return other && *other ? other : GISTPROXY_BINARY;
}

namespace {
std::atomic<int> instances{0};

// NAME=VALUE whose NAME ends in _proxy, in any case (https_proxy, NO_PROXY, ...).
bool is_proxy_variable(std::string_view entry) {
  const auto name = entry.substr(0, entry.find('='));
  constexpr std::string_view suffix = "_proxy";
  if (name.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), name.end() - suffix.size(),
                    [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
}

}  // namespace

proxy_process::proxy_process(std::vector<std::string> args, const std::vector<std::string>& env) {
  std::vector<std::string> argv{gistproxy_binary(), "serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"};
  // Each proxy gets its own blob store unless the test names one.
  if (std::find(args.begin(), args.end(), "--store") == args.end()) {
    store_dir_ = std::filesystem::temp_directory_path() /
                 ("gistproxy-store-" + std::to_string(::getpid()) + "-" + std::to_string(++instances));
    argv.insert(argv.end(), {"--store", store_dir_.string()});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  // The test's environment without OTEL_* (tests configure exporters by
  // flag) and without proxy variables (a machine's HTTPS_PROXY or NO_PROXY
  // would route the tests' loopback upstreams elsewhere; egress tests pass
  // their own), plus `env`.
  std::vector<std::string> child_env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "OTEL_", 5) != 0 && !is_proxy_variable(*e)) child_env.push_back(*e);
  child_env.insert(child_env.end(), env.begin(), env.end());
  process_ = std::make_unique<child_process>(argv, child_env);

  process_->wait_for_output([](const std::string& out) { return out.find("\"msg\":\"listening\"") != std::string::npos; },
                            std::chrono::seconds(10));
  auto out = process_->output();
  std::smatch m;
  static const std::regex re(R"re("listen":"[^"]*:(\d+)","admin":"[^"]*:(\d+)")re");
  if (std::regex_search(out, m, re)) {
    port_ = std::uint16_t(std::stoi(m[1]));
    admin_port_ = std::uint16_t(std::stoi(m[2]));
  }
  if (port_ == 0) {
    process_->stop(SIGKILL);
    throw std::runtime_error("gistproxy did not start; its stderr:\n" + process_->output());
  }
}

int proxy_process::stop(int signal_number) { return process_->stop(signal_number); }

proxy_process::~proxy_process() {
  stop();
  std::error_code ec;
  if (!store_dir_.empty()) std::filesystem::remove_all(store_dir_, ec);
}

std::string proxy_process::log() const { return process_->output(); }

}  // namespace gistproxy::testing
