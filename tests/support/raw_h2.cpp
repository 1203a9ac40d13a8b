#include "tests/support/raw_h2.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace gistproxy::testing {
namespace {

std::uint32_t be32(const std::string& s, std::size_t at) {
  auto b = [&](std::size_t i) { return std::uint32_t(static_cast<unsigned char>(s[at + i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

std::string u32(std::uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

// A literal field without indexing, its name from the static table (RFC
// 7541 §6.2.2), lengths under 127.
std::string literal(std::uint8_t name_index, const std::string& value) {
  return std::string{char(name_index), char(value.size())} + value;
}

}  // namespace

raw_h2::raw_h2(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("raw_h2: connect failed");
  send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(0x4, 0, 0, {}));
}

raw_h2::~raw_h2() { ::close(fd_); }

std::string raw_h2::frame(std::uint8_t type, std::uint8_t flags, std::int32_t stream, const std::string& payload) {
  const auto n = payload.size();
  return std::string{char(n >> 16), char(n >> 8), char(n), char(type), char(flags)} + u32(std::uint32_t(stream)) +
         payload;
}

std::string raw_h2::get(std::int32_t stream, const std::string& path) {
  // :method GET (static 2), :scheme http (static 6), :path, :authority.
  const std::string block = std::string("\x82\x86", 2) + literal(4, path) + literal(1, "127.0.0.1");
  return frame(0x1, 0x5, stream, block);  // END_STREAM | END_HEADERS
}

std::string raw_h2::post_head(std::int32_t stream, const std::string& path) {
  // :method POST (static 3), :scheme http, :path, :authority; END_HEADERS only.
  const std::string block = std::string("\x83\x86", 2) + literal(4, path) + literal(1, "127.0.0.1");
  return frame(0x1, 0x4, stream, block);
}

std::string raw_h2::data(std::int32_t stream, const std::string& bytes, bool end) {
  return frame(0x0, end ? 0x1 : 0, stream, bytes);
}

std::string raw_h2::reset(std::int32_t stream, std::uint32_t code) { return frame(0x3, 0, stream, u32(code)); }

std::string raw_h2::window_update(std::int32_t stream, std::uint32_t increment) {
  return frame(0x8, 0, stream, u32(increment));
}

void raw_h2::send(const std::string& bytes) {
  for (std::size_t at = 0; at < bytes.size();) {
    const auto n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n <= 0) {
      ended = true;
      return;
    }
    at += std::size_t(n);
  }
}

void raw_h2::on_frame(std::uint8_t type, std::uint8_t flags, std::int32_t stream, const std::string& payload) {
  switch (type) {
    case 0x1: answered.insert(stream); break;
    case 0x3:
      if (payload.size() == 4) resets[stream] = be32(payload, 0);
      break;
    case 0x4:
      if (flags & 0x1) break;  // an ACK
      for (std::size_t at = 0; at + 6 <= payload.size(); at += 6)
        if (payload[at] == 0 && payload[at + 1] == 3) max_concurrent_streams = be32(payload, at + 2);
      send(frame(0x4, 0x1, 0, {}));
      break;
    case 0x7:
      if (payload.size() >= 8) goaway = be32(payload, 4);
      break;
    default: break;
  }
}

bool raw_h2::read_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (!done() && !ended) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, int(std::min<long long>(left.count(), 100))) <= 0) continue;
    const auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      ended = true;
      break;
    }
    pending_.append(buf, std::size_t(n));
    while (pending_.size() >= 9) {
      const std::size_t length = (std::size_t(static_cast<unsigned char>(pending_[0])) << 16) |
                                 (std::size_t(static_cast<unsigned char>(pending_[1])) << 8) |
                                 static_cast<unsigned char>(pending_[2]);
      if (pending_.size() < 9 + length) break;
      on_frame(std::uint8_t(pending_[3]), std::uint8_t(pending_[4]), std::int32_t(be32(pending_, 5) & 0x7fffffff),
               pending_.substr(9, length));
      pending_.erase(0, 9 + length);
    }
  }
  return done();
}

}  // namespace gistproxy::testing
