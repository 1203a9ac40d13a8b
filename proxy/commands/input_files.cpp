#include "proxy/commands/input_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gistproxy::proxy {

bool is_regular_input(const std::string& path, std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return error = std::strerror(errno), false;
  if (!S_ISREG(st.st_mode)) return error = "not a regular file (FIFOs, devices and sockets are refused)", false;
  return true;
}

std::optional<std::string> read_input_file(const std::string& path, std::uint64_t max_bytes, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // O_NONBLOCK: a FIFO never blocks the open
  if (fd < 0) return error = std::strerror(errno), std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return error = "not a regular file (FIFOs, devices and sockets are refused)", std::nullopt;
  }
  if (std::uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    return error = "larger than " + std::to_string(max_bytes >> 20) + " MiB", std::nullopt;
  }
  std::string out;
  out.resize(std::size_t(st.st_size));
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) {
      if (out.size() >= max_bytes) break;  // a file that grows while read: read up to the bound
      out.resize(std::min<std::uint64_t>(max_bytes + 1, out.size() + 65536));
    }
    const ssize_t n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return error = std::strerror(errno), std::nullopt;
    }
    if (n == 0) break;
    have += std::size_t(n);
  }
  ::close(fd);
  if (have > max_bytes) return error = "larger than " + std::to_string(max_bytes >> 20) + " MiB", std::nullopt;
  out.resize(have);
  return out;
}

}  // namespace gistproxy::proxy
