#include "tests/support/proxy_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <condition_variable>
#include <cstring>
#include <regex>
#include <stdexcept>

extern char** environ;

namespace gistproxy::testing {

const char* gistproxy_binary() { return GISTPROXY_BINARY; }

namespace {
std::atomic<int> instances{0};
}

proxy_process::proxy_process(std::vector<std::string> args, const std::vector<std::string>& env) {
  std::vector<std::string> argv_s{gistproxy_binary(), "serve", "--listen", "127.0.0.1:0", "--admin-listen",
                                  "127.0.0.1:0"};
  // Each proxy gets its own blob store unless the test names one.
  if (std::find(args.begin(), args.end(), "--store") == args.end()) {
    store_dir_ = std::filesystem::temp_directory_path() /
                 ("gistproxy-store-" + std::to_string(::getpid()) + "-" + std::to_string(++instances));
    argv_s.insert(argv_s.end(), {"--store", store_dir_.string()});
  }
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "OTEL_", 5) != 0) env_s.push_back(*e);
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) throw std::runtime_error(std::string("cannot start ") + argv[0]);
  stderr_fd_ = fds[0];

  reader_ = std::thread([this] {
    auto& ready = ready_;
    auto& done = started_;
    char buf[4096];
    for (;;) {
      ssize_t n = read(stderr_fd_, buf, sizeof buf);
      if (n <= 0) break;
      std::lock_guard lock(mutex_);
      log_.append(buf, std::size_t(n));
      if (!done && log_.find("\"msg\":\"listening\"") != std::string::npos) {
        std::smatch m;
        static const std::regex re(R"re("listen":"[^"]*:(\d+)","admin":"[^"]*:(\d+)")re");
        if (std::regex_search(log_, m, re)) {
          port_ = std::uint16_t(std::stoi(m[1]));
          admin_port_ = std::uint16_t(std::stoi(m[2]));
        }
        done = true;
        ready.notify_all();
      }
    }
    std::lock_guard lock(mutex_);
    done = true;
    ready.notify_all();
  });
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, std::chrono::seconds(10), [&] { return started_; });
  if (port_ == 0) {
    std::string log = log_;
    lock.unlock();
    stop(SIGKILL);
    throw std::runtime_error("gistproxy did not start; its stderr:\n" + log);
  }
}

int proxy_process::stop(int signal_number) {
  if (pid_ > 0) {
    kill(pid_, signal_number);
    int status = 0;
    for (int i = 0; i < 1000; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pid_ = -1;
        break;
      }
      usleep(10'000);
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      exit_status_ = -1;
    }
  }
  if (reader_.joinable()) reader_.join();
  if (stderr_fd_ >= 0) close(stderr_fd_), stderr_fd_ = -1;
  return exit_status_;
}

proxy_process::~proxy_process() {
  stop();
  std::error_code ec;
  if (!store_dir_.empty()) std::filesystem::remove_all(store_dir_, ec);
}

std::string proxy_process::log() const {
  std::lock_guard lock(mutex_);
  return log_;
}

}  // namespace gistproxy::testing
