// The private gistproxy that `gistproxy wrap` runs for one agent: `serve` as
// a child process on ephemeral loopback ports, in a process group of its own
// (the terminal's Ctrl-C reaches the agent, not the proxy), its log copied to
// a file so nothing is printed over the agent's screen. Stopped with SIGTERM
// (it drains), killed only past the drain time.
#pragma once

#include <chrono>
#include <cstdint>
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
  wrap_proxy(const std::vector<std::string>& serve_args, const std::string& log_path,
             std::chrono::milliseconds start_timeout = std::chrono::seconds(20));
  ~wrap_proxy();
  wrap_proxy(const wrap_proxy&) = delete;
  wrap_proxy& operator=(const wrap_proxy&) = delete;

  std::string base_url() const { return "http://" + listen_; }
  std::string admin_url() const { return "http://" + admin_; }
  pid_t pid() const { return pid_; }

  // GET of an admin path (/api/summary, /metrics) on loopback; nullopt on failure.
  std::optional<std::string> admin_get(const std::string& path) const;
  // SIGTERM, then waits up to `drain` (+ a margin) before SIGKILL; the exit status.
  int stop(std::chrono::milliseconds drain);

 private:
  pid_t pid_ = -1;
  int log_fd_ = -1;  // read end of the proxy's stderr
  std::string listen_, admin_;
  std::thread copier_;  // proxy stderr → log file, until the proxy closes it
};

// The proxy binary wrap starts: this very program.
std::string own_executable();

}  // namespace gistproxy::proxy
