#include "tests/support/child_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace gistproxy::testing {

std::string find_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return std::filesystem::exists(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    auto candidate = std::filesystem::path(dir) / name;
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

child_process::child_process(std::vector<std::string> argv_s, std::optional<std::vector<std::string>> env) {
  auto program = find_in_path(argv_s.at(0));
  if (program.empty()) throw std::runtime_error(argv_s[0] + " not found in PATH (scripts/install-deps installs it)");
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> envp;
  if (env) {
    for (auto& e : *env) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  int rc = posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(), env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error("cannot start " + program);
  }
  out_fd_ = fds[0];
  reader_ = std::thread([this] {
    char buf[4096];
    for (;;) {
      ssize_t n = read(out_fd_, buf, sizeof buf);
      if (n <= 0) break;
      std::lock_guard lock(mutex_);
      output_.append(buf, std::size_t(n));
      grew_.notify_all();
    }
    std::lock_guard lock(mutex_);
    output_closed_ = true;
    grew_.notify_all();
  });
}

std::string child_process::output() const {
  std::lock_guard lock(mutex_);
  return output_;
}

bool child_process::wait_for_output(const std::function<bool(const std::string&)>& ready,
                                    std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  grew_.wait_for(lock, timeout, [&] { return ready(output_) || output_closed_; });
  return ready(output_);
}

bool child_process::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pid_ = -1;
  return false;
}

int child_process::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    usleep(10'000);
  }
  if (reader_.joinable()) reader_.join();
  return exit_status_;
}

int child_process::stop(int signal_number) {
  if (running()) {
    kill(pid_, signal_number);
    if (wait(std::chrono::seconds(10)) == -1 && pid_ > 0) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      exit_status_ = -1;
    }
  }
  if (reader_.joinable()) reader_.join();
  if (out_fd_ >= 0) close(out_fd_), out_fd_ = -1;
  return exit_status_;
}

child_process::~child_process() { stop(); }

command_result run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  child_process p(argv);
  int code = p.wait(timeout);
  if (code == -1) p.stop(SIGKILL);
  return {code, p.output()};
}

}  // namespace gistproxy::testing
