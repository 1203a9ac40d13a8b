#include "tests/support/connect_proxy.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string_view>

namespace gistproxy::testing {
namespace {

constexpr std::size_t max_head = 16 * 1024;

// Waits (bounded: 20 s) for fd to be readable; false on timeout or stop.
bool readable(int fd, const std::atomic<bool>& stop) {
  for (int i = 0; i < 200 && !stop; ++i) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r > 0) return true;
    if (r < 0) return false;
  }
  return false;
}

bool send_all(int fd, std::string_view out) {
  while (!out.empty()) {
    ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    out.remove_prefix(std::size_t(n));
  }
  return true;
}

// A blocking TCP connection to host:port, or -1.
int dial(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (auto* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) ::close(fd), fd = -1;
  }
  ::freeaddrinfo(found);
  return fd;
}

// A header field's value (name in lowercase), trimmed; empty if absent.
std::string header_value(const std::string& head, const std::string& name) {
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  auto at = lower.find("\r\n" + name + ":");
  if (at == std::string::npos) return {};
  at += name.size() + 3;
  const auto end = head.find("\r\n", at);
  std::string value = head.substr(at, end - at);
  value.erase(0, value.find_first_not_of(" \t"));
  value.erase(value.find_last_not_of(" \t") + 1);
  return value;
}

std::string status_answer(int status, const std::string& extra = {}) {
  return "HTTP/1.1 " + std::to_string(status) + " Test\r\n" + extra + "Content-Length: 0\r\nConnection: close\r\n\r\n";
}

}  // namespace

connect_proxy::connect_proxy(connect_proxy_options options) : options_(std::move(options)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("connect_proxy: cannot listen");
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

connect_proxy::~connect_proxy() {
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

std::string connect_proxy::url_with(const std::string& userinfo) const {
  return "http://" + userinfo + "@127.0.0.1:" + std::to_string(port_);
}

std::vector<std::string> connect_proxy::targets() const {
  std::lock_guard lock(mutex_);
  return targets_;
}

std::vector<std::string> connect_proxy::authorizations() const {
  std::lock_guard lock(mutex_);
  return authorizations_;
}

void connect_proxy::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++connections_;
    std::lock_guard lock(mutex_);
    workers_.emplace_back([this, fd] {
      serve(fd);
      ::close(fd);
    });
  }
}

void connect_proxy::serve(int fd) {
  std::string in;
  char buf[4096];
  std::size_t head_end;
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
    if (in.size() > max_head || !readable(fd, stop_)) return;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    in.append(buf, std::size_t(n));
  }
  const std::string head = in.substr(0, head_end + 2);
  const std::string early = in.substr(head_end + 4);  // sent before our answer (a client should not)
  const auto first_space = head.find(' ');
  const auto second_space = head.find(' ', first_space + 1);
  if (head.substr(0, first_space) != "CONNECT" || second_space == std::string::npos) {
    send_all(fd, status_answer(405));
    return;
  }
  const std::string target = head.substr(first_space + 1, second_space - first_space - 1);
  const std::string authorization = header_value(head, "proxy-authorization");
  {
    std::lock_guard lock(mutex_);
    targets_.push_back(target);
    authorizations_.push_back(authorization);
  }
  if (options_.silent) {
    while (readable(fd, stop_) && ::recv(fd, buf, sizeof buf, 0) > 0) {
    }
    return;
  }
  if (options_.refuse_status) return void(send_all(fd, status_answer(options_.refuse_status)));
  if (!options_.required_authorization.empty() && authorization != options_.required_authorization)
    return void(send_all(fd, status_answer(407, "Proxy-Authenticate: Basic realm=\"test\"\r\n")));

  const auto colon = target.rfind(':');
  std::string host = target.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  if (!options_.resolve_all_to.empty()) host = options_.resolve_all_to;
  const int upstream = colon == std::string::npos ? -1 : dial(host, target.substr(colon + 1));
  if (upstream < 0) return void(send_all(fd, status_answer(502)));
  const bool drop = tunnels_.fetch_add(1) < options_.drop_tunnels;
  if (send_all(fd, "HTTP/1.1 200 Connection established\r\n\r\n") && (early.empty() || send_all(upstream, early)))
    relay(fd, upstream, drop);
  ::close(upstream);
}

void connect_proxy::relay(int client, int upstream, bool drop) {
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  char buf[65536];
  while (!stop_) {
    int r = ::poll(fds, 2, 100);
    if (r < 0) return;
    for (int i = 0; r > 0 && i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      // A dropped tunnel: the client's first bytes never reach the upstream.
      if (i == 0 && drop) return;
      if (!send_all(fds[1 - i].fd, std::string_view(buf, std::size_t(n)))) return;
    }
  }
}

}  // namespace gistproxy::testing
