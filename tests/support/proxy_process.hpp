// Runs the real gistproxy binary for integration tests: spawns it with the
// given flags on loopback port 0, learns its ports from the "listening" log
// line, and stops it (SIGTERM) at the end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gistproxy::testing {

class proxy_process {
 public:
  explicit proxy_process(std::vector<std::string> args, const std::vector<std::string>& env = {});
  ~proxy_process();
  std::uint16_t port() const { return port_; }
  std::uint16_t admin_port() const { return admin_port_; }
  // Sends SIGTERM and waits (bounded); returns the exit status (-1 on timeout).
  int stop(int signal_number = 15);
  std::string log() const;  // everything it wrote to stderr so far
  const std::filesystem::path& store_dir() const { return store_dir_; }

 private:
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  std::uint16_t port_ = 0, admin_port_ = 0;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::string log_;
  std::condition_variable ready_;
  bool started_ = false;  // the listening line arrived, or stderr closed
  int exit_status_ = -1;
  std::filesystem::path store_dir_;
};

const char* gistproxy_binary();

}  // namespace gistproxy::testing
