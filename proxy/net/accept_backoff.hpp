// What both listeners do when accept() fails (EMFILE/ENFILE: out of
// descriptors, ENOBUFS, ...): the failed connection stays in the kernel's
// backlog and the next accept fails at once, so retrying immediately spins a
// core and starves the thread's other work. Instead: count it
// (gistproxy_accept_paused_total{reason="descriptors"|"error"}), log the
// first failure of a run, and pause, doubling from 20 ms to a second.
#pragma once

#include <chrono>
#include <string_view>

#include "proxy/net/beast.hpp"
#include "proxy/services.hpp"

namespace gistproxy::proxy {

class accept_backoff {
 public:
  // After a failed accept on `listener` ("proxy", "admin"): count, log, wait.
  awaitable<void> pause(services& svc, const error_code& ec, std::string_view listener);
  // After a successful accept: the next failure starts a new run.
  void reset() { delay_ = first_delay; }

 private:
  static constexpr std::chrono::milliseconds first_delay{20}, max_delay{1000};
  std::chrono::milliseconds delay_ = first_delay;
};

}  // namespace gistproxy::proxy
