// gistproxy-mock-upstream: the test suite's scripted upstream as a standalone
// process (benchmarks, SDK tests). Prints {"port":N} on stdout once listening.
#include <csignal>
#include <cstdio>
#include <string>
#include <unistd.h>

#include "tests/support/mock_upstream.hpp"

int main(int argc, char** argv) {
  gistproxy::testing::mock_upstream_options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--port") o.port = std::uint16_t(std::stoi(v));
    else if (k == "--threads") o.threads = unsigned(std::stoi(v));
    else if (k == "--tls-cert") o.tls_cert_file = v;
    else if (k == "--tls-key") o.tls_key_file = v;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // threads inherit: only sigwait sees them
  gistproxy::testing::mock_upstream upstream(o);
  std::printf("{\"port\":%u}\n", unsigned(upstream.port()));
  std::fflush(stdout);
  int sig;
  sigwait(&set, &sig);
  return 0;
}
