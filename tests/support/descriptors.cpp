#include "tests/support/descriptors.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "tests/support/http_client.hpp"

namespace gistproxy::testing {
namespace {

std::set<long> descriptor_numbers(int pid) {
  std::set<long> numbers;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    numbers.insert(std::stol(it->path().filename().string()));
  return numbers;
}

}  // namespace

int idle_connection(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::size_t open_descriptors(int pid) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

std::size_t started_descriptors(proxy_process& proxy) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (http_request(proxy.admin_port(), "GET", "/healthz").status != 200 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int i = 0; i < 4; ++i) http_request(proxy.port(), "GET", "/echo");
  auto count = open_descriptors(proxy.pid());
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = open_descriptors(proxy.pid());
    if (now == count || std::chrono::steady_clock::now() > deadline) return now;
    count = now;
  }
}

bool leave_descriptors(int pid, std::size_t left) {
  rlimit now{};
  if (::prlimit(pid, RLIMIT_NOFILE, nullptr, &now) != 0) return false;
  const auto open = descriptor_numbers(pid);
  // The limit is the (left+1)-th free number: the `left` free ones below it
  // may still be taken, nothing past them.
  long limit = 0;
  for (std::size_t free_seen = 0;; ++limit)
    if (!open.count(limit) && free_seen++ == left) break;
  const rlimit lowered{rlim_t(limit), now.rlim_max};
  return ::prlimit(pid, RLIMIT_NOFILE, &lowered, nullptr) == 0;
}

bool raise_descriptor_limit(int pid) {
  rlimit now{};
  if (::prlimit(pid, RLIMIT_NOFILE, nullptr, &now) != 0) return false;
  const rlimit raised{now.rlim_max, now.rlim_max};
  return ::prlimit(pid, RLIMIT_NOFILE, &raised, nullptr) == 0;
}

}  // namespace gistproxy::testing
