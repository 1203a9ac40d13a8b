// The private gistproxy that `gistproxy wrap` runs for one agent: `serve` as
// a child process on ephemeral loopback ports, in a process group of its own
// (the terminal's Ctrl-C reaches the agent, not the proxy), its log copied to
// a file so nothing is printed over the agent's screen. Stopped with SIGTERM
// (it drains), killed only past the drain time or when the user gives up
// waiting. A wrap that is killed outright takes its proxy with it (the
// proxy gets SIGTERM when wrap dies).
#pragma once

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace gistproxy::proxy {

class wrap_proxy {
 public:
  // Starts `serve` with `serve_args` (listeners added here); throws with the
  // proxy's own words if it does not come up within `start_timeout`.
  // `give_up` (set from a signal handler, may be null): stop waiting, for
  // the start and for the drain in stop().
  wrap_proxy(const std::vector<std::string>& serve_args, const std::string& log_path,
             const volatile sig_atomic_t* give_up = nullptr,
             std::chrono::milliseconds start_timeout = std::chrono::seconds(20));
  ~wrap_proxy();
  wrap_proxy(const wrap_proxy&) = delete;
  wrap_proxy& operator=(const wrap_proxy&) = delete;

  std::string base_url() const { return "http://" + listen_; }
  std::string admin_url() const { return "http://" + admin_; }
  pid_t pid() const { return pid_; }

  // GET of an admin path (/api/summary, /metrics) on loopback; nullopt on failure.
  std::optional<std::string> admin_get(const std::string& path) const;
  // SIGTERM, then waits up to `drain` (+ a margin), or until `give_up` is
  // set, before SIGKILL; the exit status. `slow` is called once if the
  // drain takes more than a second.
  int stop(std::chrono::milliseconds drain, const std::function<void()>& slow = {});

 private:
  bool gave_up() const { return give_up_ && *give_up_; }

  const volatile sig_atomic_t* give_up_ = nullptr;
  pid_t pid_ = -1;
  int log_fd_ = -1;  // read end of the proxy's stderr
  std::string listen_, admin_;
  std::thread copier_;  // proxy stderr → log file, until the proxy closes it
};

// The proxy binary wrap starts: this very program.
std::string own_executable();

}  // namespace gistproxy::proxy
