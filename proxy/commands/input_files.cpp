#include "proxy/commands/input_files.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace gistproxy::proxy {

int open_any_length(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd >= 0 || errno != ENAMETOOLONG) return fd;
  std::string_view rest(path);
  while (rest.size() > 1 && rest.back() == '/') rest.remove_suffix(1);
  int dir = ::open(rest.front() == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (;;) {
    if (dir < 0) return -1;
    while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
    const auto slash = rest.find('/');
    const std::string name(rest.substr(0, slash));
    const int next = ::openat(dir, name.c_str(), slash == std::string_view::npos ? flags : O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const int saved = errno;
    ::close(dir);
    errno = saved;
    if (slash == std::string_view::npos) return next;
    rest.remove_prefix(slash);
    dir = next;
  }
}

bool on_kernel_pseudo_filesystem(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case BPF_FS_MAGIC:
    case PSTOREFS_MAGIC:
    case EFIVARFS_MAGIC:
      return true;
    default:
      return false;
  }
}

bool is_regular_input(const std::string& path, std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return error = std::strerror(errno), false;
  if (!S_ISREG(st.st_mode)) return error = "not a regular file (FIFOs, devices and sockets are refused)", false;
  return true;
}

std::optional<std::string> read_input_file(const std::string& path, std::uint64_t max_bytes, std::string& error,
                                           input_kinds kinds) {
  int fd = open_any_length(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // O_NONBLOCK: a FIFO never blocks the open
  if (fd < 0) return error = std::strerror(errno), std::nullopt;
  struct stat st {};
  if (kinds == input_kinds::regular_or_fifo && ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
    // A FIFO opened without blocking has no writer yet, and its first read
    // would say "end of file" before the writer (a process substitution
    // starting up) opens its end: open it again, waiting for the writer.
    ::close(fd);
    do fd = open_any_length(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) return error = std::strerror(errno), std::nullopt;
  }
  return read_input_fd(fd, max_bytes, error, kinds);
}

std::optional<std::string> read_input_fd(int fd, std::uint64_t max_bytes, std::string& error, input_kinds kinds) {
  struct stat st {};
  const bool fstat_ok = ::fstat(fd, &st) == 0;
  const bool fifo = fstat_ok && S_ISFIFO(st.st_mode) && kinds == input_kinds::regular_or_fifo;
  if (!fstat_ok || !(S_ISREG(st.st_mode) || fifo)) {
    ::close(fd);
    return error = "not a regular file (FIFOs, devices and sockets are refused)", std::nullopt;
  }
  if (!fifo && on_kernel_pseudo_filesystem(fd)) {
    ::close(fd);
    return error = kernel_pseudo_file_error, std::nullopt;
  }
  // A FIFO the user named is read as it is fed (blocking), up to the bound.
  if (fifo) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (!fifo && std::uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    return error = "larger than " + std::to_string(max_bytes >> 20) + " MiB", std::nullopt;
  }
  std::string out;
  out.resize(fifo ? 0 : std::size_t(st.st_size));
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) {
      if (out.size() > max_bytes) break;  // a file that grows while read: read up to the bound
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
