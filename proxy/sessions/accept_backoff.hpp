// What both listeners do when accept() fails (EMFILE/ENFILE: out of
// descriptors, ENOBUFS, ...): the failed connection stays in the kernel's
// backlog and the next accept fails at once, so retrying immediately spins a
// core and starves the thread's other work. Instead: count it
// (gistproxy_accept_paused_total{reason="descriptors"|"error"}) and log the
// first failure of a run. Out of descriptors, the waiting client is answered
// 503 at once on the listener's reserve descriptor and closed
// (gistproxy_accept_shed_total{listener}; descriptor_reserve.hpp), and the
// loop accepts again: each answer consumed one waiting connection; with none
// waiting, it waits for the next to come. Otherwise (or when the reserve
// could not be held) it pauses, doubling from 20 ms to a second.
#pragma once

#include <chrono>
#include <string_view>

#include "proxy/net/beast.hpp"
#include "proxy/net/descriptor_reserve.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

class accept_backoff {
 public:
  // After a failed accept on `acceptor`, the `listener` ("proxy", "admin"):
  // count, log, answer a waiting client or wait.
  awaitable<void> pause(services& svc, const error_code& ec, tcp_acceptor& acceptor, std::string_view listener);
  // After a successful accept: the next failure starts a new run.
  void reset() {
    delay_ = first_delay;
    failing_ = false;
  }

 private:
  static constexpr std::chrono::milliseconds first_delay{20}, max_delay{1000};
  std::chrono::milliseconds delay_ = first_delay;
  bool failing_ = false;  // in a run of failures: logged already
  descriptor_reserve reserve_;
};

}  // namespace gistproxy::proxy
