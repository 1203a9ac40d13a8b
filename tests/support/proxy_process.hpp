// Runs the real gistproxy binary for integration tests: spawns it with the
// given flags on loopback port 0, learns its ports from the "listening" log
// line, and stops it (SIGTERM) at the end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"

namespace gistproxy::testing {

class proxy_process {
 public:
  explicit proxy_process(std::vector<std::string> args, const std::vector<std::string>& env = {});
  ~proxy_process();
  std::uint16_t port() const { return port_; }
  std::uint16_t admin_port() const { return admin_port_; }
  // Sends the signal (SIGTERM by default) and waits (bounded); returns the exit status (-1 on timeout).
  int stop(int signal_number = 15);
  std::string log() const;  // everything it wrote so far
  const std::filesystem::path& store_dir() const { return store_dir_; }
  int pid() const { return process_->pid(); }

 private:
  std::unique_ptr<child_process> process_;
  std::uint16_t port_ = 0, admin_port_ = 0;
  std::filesystem::path store_dir_;
};

const char* gistproxy_binary();

}  // namespace gistproxy::testing
