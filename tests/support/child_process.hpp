// Runs an external program for tests (Prometheus, promtool, docker-compose,
// `gistproxy report`): output (stdout and stderr together) collected by a
// reader thread, stopped with SIGTERM (then SIGKILL) when the object dies.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace gistproxy::testing {

class child_process {
 public:
  // argv[0] is a path or a name looked up in PATH. `env` (NAME=VALUE entries)
  // replaces the environment when given; else the child inherits ours.
  explicit child_process(std::vector<std::string> argv, std::optional<std::vector<std::string>> env = std::nullopt);
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  std::string output() const;
  // Waits (bounded) until `ready` holds for the output so far, or the output ends.
  bool wait_for_output(const std::function<bool(const std::string&)>& ready, std::chrono::milliseconds timeout);
  bool running();
  pid_t pid() const { return pid_; }
  // Waits for the exit (bounded); returns the exit code, 128+signal, or -1 on timeout.
  int wait(std::chrono::milliseconds timeout);
  int stop(int signal_number = 15);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int exit_status_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::condition_variable grew_;
  std::string output_;
  bool output_closed_ = false;
};

struct command_result {
  int exit_code = -1;
  std::string output;
};

// Runs argv to completion (killed after `timeout`).
command_result run_command(const std::vector<std::string>& argv,
                           std::chrono::milliseconds timeout = std::chrono::seconds(60));

// A path to the program if it is in PATH, else empty.
std::string find_in_path(const std::string& name);

}  // namespace gistproxy::testing
