#include "proxy/commands/wrap_settings_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace gistproxy::proxy {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a file";
  if (S_ISSOCK(mode)) return "is a socket, not a file";
  return "is a device, not a file";
}

std::string size_words(std::size_t n) {
  constexpr std::size_t mib = 1 << 20;
  return n >= mib && n % mib == 0 ? std::to_string(n / mib) + " MiB" : std::to_string(n) + " bytes";
}

}  // namespace

settings_file read_settings_file(const std::string& path, std::size_t limit) {
  settings_file out;
  // Non-blocking: opening a FIFO with no writer would otherwise wait forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) out.missing = true;
    else out.problem = std::string("cannot be opened: ") + std::strerror(errno);
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) out.problem = std::string("cannot be read: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) out.problem = kind_of(st.st_mode);
  else if (std::uint64_t(st.st_size) > limit)
    out.problem = "is larger than " + size_words(limit) + " (" + std::to_string(st.st_size) + " bytes)";
  if (out.problem.empty()) {
    out.text.resize(std::size_t(st.st_size));
    std::size_t got = 0;
    while (got < out.text.size()) {
      const auto n = ::read(fd, out.text.data() + got, out.text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        out.problem = std::string("cannot be read: ") + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      got += std::size_t(n);
    }
    out.text.resize(got);  // a file that shrank meanwhile reads short
  }
  if (!out.problem.empty()) out.text.clear();
  ::close(fd);
  return out;
}

}  // namespace gistproxy::proxy
