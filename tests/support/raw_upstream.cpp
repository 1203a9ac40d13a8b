#include "tests/support/raw_upstream.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace gistproxy::testing {
namespace {

// Waits (bounded) for fd to be readable; false on timeout or stop.
bool readable(int fd, const std::atomic<bool>& stop) {
  for (int i = 0; i < 200 && !stop; ++i) {  // 20 s at most
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r > 0) return true;
    if (r < 0) return false;
  }
  return false;
}

bool send_all(int fd, std::string_view out) {
  while (!out.empty()) {
    const ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    out.remove_prefix(std::size_t(n));
  }
  return true;
}

std::size_t content_length(const std::string& head) {
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  auto at = lower.find("\r\ncontent-length:");
  return at == std::string::npos ? 0 : std::stoul(lower.substr(at + 17));
}

}  // namespace

raw_upstream::raw_upstream(std::vector<raw_answer> script) : script_(std::move(script)) {
  if (script_.empty()) throw std::invalid_argument("raw_upstream needs a script");
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 16) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("raw_upstream: cannot listen");
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

raw_upstream::~raw_upstream() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

std::vector<std::string> raw_upstream::bodies() const {
  std::lock_guard lock(mutex_);
  return bodies_;
}

std::vector<std::string> raw_upstream::heads() const {
  std::lock_guard lock(mutex_);
  return heads_;
}

std::string raw_upstream::response(const std::string& body, const std::string& content_type, int status) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

void raw_upstream::serve() {
  while (!stop_) {
    if (!readable(listen_fd_, stop_)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int one = 1;  // each piece of a paused answer leaves at once
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    serve_connection(fd);  // one connection at a time: the proxy's pool reuses it
    ::close(fd);
  }
}

void raw_upstream::serve_connection(int fd) {
  std::string in;
  char buf[65536];
  while (!stop_) {
    std::size_t head_end;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
      if (!readable(fd, stop_)) return;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      in.append(buf, std::size_t(n));
    }
    const std::size_t total = head_end + 4 + content_length(in.substr(0, head_end + 2));
    while (in.size() < total) {
      if (!readable(fd, stop_)) return;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      in.append(buf, std::size_t(n));
    }
    {
      std::lock_guard lock(mutex_);
      bodies_.push_back(in.substr(head_end + 4, total - head_end - 4));
      heads_.push_back(in.substr(0, head_end + 2));
    }
    in.erase(0, total);
    const auto& answer = script_[std::min(requests_.fetch_add(1), script_.size() - 1)];
    std::size_t from = 0;
    for (std::size_t to : answer.pause_before) {
      if (to <= from || to >= answer.bytes.size()) continue;
      if (!send_all(fd, std::string_view(answer.bytes).substr(from, to - from))) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      from = to;
    }
    if (!send_all(fd, std::string_view(answer.bytes).substr(from))) return;
    if (answer.close_after) return;
  }
}

}  // namespace gistproxy::testing
