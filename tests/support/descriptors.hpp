// File descriptors of a running proxy, for tests that starve it of them:
// count them, wait until it is fully started, and lower its RLIMIT_NOFILE
// (prlimit(2)) so that a given number are left, then raise it again.
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <cstdint>

#include "tests/support/proxy_process.hpp"

namespace gistproxy::testing {

// Connected to 127.0.0.1:port, sending nothing; -1 when the kernel refused.
int idle_connection(std::uint16_t port);

// The descriptors the process holds now (/proc/PID/fd).
std::size_t open_descriptors(int pid);

// The descriptors a proxy holds once it is fully started. "listening" is
// logged before the server runs, and running opens more (the signal sets'
// pipe; a shard's reactor on its first connection): counted too early, a tight
// limit leaves nothing to accept with. A /healthz answer proves the admin
// loop runs (after the signals are set); a few proxied requests (GET /echo:
// the mock upstream) touch every shard. Then it waits for the count to hold still.
std::size_t started_descriptors(proxy_process& proxy);

// Lowers the process's soft descriptor limit so that exactly `left` more
// descriptors can be opened (a descriptor takes the lowest free number, so
// the limit is set just past the `left`-th free number, whatever holes there
// are). The hard limit stays: raise_descriptor_limit() undoes it. False if
// prlimit failed.
bool leave_descriptors(int pid, std::size_t left);
// Puts the soft limit back at the hard one.
bool raise_descriptor_limit(int pid);

// Whether this is the sanitizer build, where a descriptor-starved proxy
// cannot be tested: UBSan's vptr check, on a miss in its type cache, proves
// the object's memory readable by writing it into a pipe(2), which needs two
// descriptors. Starved, the pipe fails and the check reports a false
// "object has invalid vptr" (first at make_shared<tcp_socket> in
// accept_backoff::pause), and -fno-sanitize-recover=all makes every report
// fatal: the proxy ends, the client gets no answer. (Run by hand with
// recovery, the report's symbolizer then holds the one descriptor the proxy
// freed to answer with.) Neither suppressions (read lazily, needing a
// descriptor too) nor UBSAN_OPTIONS can help; dropping the vptr check from
// the whole sanitizer build would cost more than these tests give. So they
// return early here, said by a WARN; the plain build, in CI too, runs them.
// (The tests' own code is not instrumented in that build: tests/CMakeLists.txt
// says so with GISTPROXY_PRODUCT_SANITIZED.)
constexpr bool sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__) || defined(GISTPROXY_PRODUCT_SANITIZED)
  return true;
#else
  return false;
#endif
}

}  // namespace gistproxy::testing

// The first line of each test that starves a proxy of descriptors.
#define SKIP_DESCRIPTOR_STARVATION_UNDER_SANITIZERS()                                                \
  if (::gistproxy::testing::sanitizer_build()) {                                                     \
    WARN("skipped in the sanitizer build: UBSan's vptr check needs descriptors a starved proxy "     \
         "lacks (tests/support/descriptors.hpp)");                                                   \
    return;                                                                                          \
  }
