#include "tests/support/tcp_relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string_view>

namespace gistproxy::testing {
namespace {

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return addr;
}

bool send_all(int fd, std::string_view out) {
  while (!out.empty()) {
    const ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    out.remove_prefix(std::size_t(n));
  }
  return true;
}

}  // namespace

tcp_relay::tcp_relay(std::size_t max_connections) : max_connections_(max_connections) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = loopback(0);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("tcp_relay: cannot listen");
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

tcp_relay::~tcp_relay() {
  stop_ = true;
  acceptor_.join();  // no worker starts after this
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.join();
  ::close(listen_fd_);
}

void tcp_relay::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (++connections_ > max_connections_) {
      ::close(fd);
      continue;
    }
    std::lock_guard lock(mutex_);
    workers_.emplace_back([this, fd] {
      relay(fd);
      ::close(fd);
    });
  }
}

void tcp_relay::relay(int client) {
  const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const auto addr = loopback(target_.load());
  if (upstream < 0 || ::connect(upstream, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (upstream >= 0) ::close(upstream);
    return;
  }
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  char buf[65536];
  while (!stop_) {
    int r = ::poll(fds, 2, 100);
    if (r < 0) break;
    bool closed = false;
    for (int i = 0; r > 0 && i < 2 && !closed; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, 0);
      closed = n <= 0 || !send_all(fds[1 - i].fd, std::string_view(buf, std::size_t(n)));
    }
    if (closed) break;
  }
  ::close(upstream);
}

}  // namespace gistproxy::testing
