// Out of file descriptors, a listener can still tell a client so. accept()
// fails with EMFILE/ENFILE and the connection stays in the kernel's backlog:
// the client would wait there until its own timeout. The classic answer
// (libev, nginx, node): each listener keeps one descriptor in reserve (open
// on /dev/null). When accept fails for lack of descriptors, the reserve is
// closed, the waiting connection accepted on the slot it freed, answered at
// once (503, Retry-After: 1, Connection: close) and closed, and the reserve
// taken back (accept_backoff.cpp). Each such answer consumes one waiting
// connection: nothing spins.
//
// Inside an exchange, descriptors run out where an upstream connection or a
// store file is opened; out_of_descriptors_warning() logs that, at most once
// a second, with what could not be done.
#pragma once

#include <string>
#include <string_view>

#include "proxy/net/beast.hpp"

namespace gistproxy::telemetry {
class logger;
}

namespace gistproxy::proxy {

// EMFILE (this process) or ENFILE (the whole system).
bool is_out_of_descriptors(const error_code& ec);

class descriptor_reserve {
 public:
  descriptor_reserve();  // takes the reserve
  ~descriptor_reserve();
  descriptor_reserve(const descriptor_reserve&) = delete;
  descriptor_reserve& operator=(const descriptor_reserve&) = delete;

  bool held() const { return fd_ >= 0; }
  // Frees the reserve's slot for one accept (taking it first if it was
  // lost); false when none could be held.
  bool lend();
  // Takes the reserve (back), if a slot is free.
  void take();

 private:
  int fd_ = -1;
};

// The whole answer a client accepted on the reserve's slot gets: 503,
// Retry-After: 1, Connection: close, the proxy's JSON error body (type
// out_of_descriptors).
const std::string& shed_answer();

// Logs "out of file descriptors" (warn) with `what` could not be done, at
// most once a second for the whole process.
void out_of_descriptors_warning(telemetry::logger& log, std::string_view what);

}  // namespace gistproxy::proxy
