#include "proxy/commands/directory_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "proxy/commands/input_files.hpp"

namespace gistproxy::proxy {
namespace {

// Closes a descriptor when it goes out of scope.
struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

// `relative`'s directories opened one after another from `root`, each
// without following a symbolic link; the last one's descriptor, or -1.
int open_directory_beneath(const std::string& root, const std::string& relative, std::string& error) {
  int fd = open_any_length(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return error = std::strerror(errno), -1;
  for (std::size_t at = 0; at < relative.size();) {
    auto slash = relative.find('/', at);
    if (slash == std::string::npos) slash = relative.size();
    const auto name = relative.substr(at, slash - at);
    at = slash + 1;
    const int next = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int saved = errno;
    ::close(fd);
    if (next < 0) return error = std::strerror(saved), -1;
    fd = next;
  }
  return fd;
}

std::string joined(const std::string& dir, const char* name) { return dir.empty() ? name : dir + "/" + name; }

// What a directory entry is, seen through a link to a file (a link to a
// directory is not followed: trees of links can loop).
enum class entry_kind { file, directory, skipped, gone };

entry_kind kind_of(int dir_fd, const char* name, std::string& why) {
  struct stat st {};
  if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return why = std::strerror(errno), entry_kind::gone;
  if (S_ISDIR(st.st_mode)) return entry_kind::directory;
  if (S_ISLNK(st.st_mode) && ::fstatat(dir_fd, name, &st, 0) != 0) return why = "a broken symbolic link", entry_kind::skipped;
  if (S_ISREG(st.st_mode)) return entry_kind::file;
  if (S_ISDIR(st.st_mode)) return why = "a symbolic link to a directory (not followed)", entry_kind::skipped;
  why = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device node";
  return entry_kind::skipped;
}

bool path_order(const walked_entry& a, const walked_entry& b) {
  return std::filesystem::path(a.relative) < std::filesystem::path(b.relative);
}

}  // namespace

bool names_directory(const std::string& path) {
  fd_guard fd{open_any_length(path, O_PATH | O_CLOEXEC)};
  struct stat st {};
  return fd.fd >= 0 && ::fstat(fd.fd, &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<directory_listing> list_directory(const std::string& root, std::string& error) {
  {
    fd_guard top{open_any_length(root, O_PATH | O_CLOEXEC)};
    struct stat st {};
    if (top.fd < 0 || ::fstat(top.fd, &st) != 0) return error = std::strerror(errno), std::nullopt;
    if (!S_ISDIR(st.st_mode)) return error = "not a directory", std::nullopt;
    if (on_kernel_pseudo_filesystem(top.fd)) return error = kernel_pseudo_directory, std::nullopt;
  }
  directory_listing out;
  std::vector<std::pair<std::string, std::size_t>> pending = {{"", 0}};  // directories to read, and their depth
  std::size_t listed = 0;
  while (!pending.empty()) {
    auto [dir, depth] = std::move(pending.back());
    pending.pop_back();
    if (depth > max_walk_depth) {
      out.unwalked.push_back({dir, "deeper than " + std::to_string(max_walk_depth) + " levels"});
      continue;
    }
    std::string why;
    fd_guard guard{open_directory_beneath(root, dir, why)};
    DIR* stream = guard.fd >= 0 ? ::fdopendir(guard.fd) : nullptr;
    if (!stream) {
      out.unwalked.push_back({dir.empty() ? "." : dir, why.empty() ? std::strerror(errno) : why});
      continue;
    }
    guard.fd = -1;  // closedir closes it
    if (on_kernel_pseudo_filesystem(::dirfd(stream))) {  // /proc mounted inside the tree
      out.skipped.push_back({dir, kernel_pseudo_directory});
      ::closedir(stream);
      continue;
    }
    errno = 0;
    while (const dirent* e = ::readdir(stream)) {
      if (e->d_name[0] == '.') continue;  // ".", "..", and dot files (editors' and agents' own state)
      if (++listed > max_walk_entries) break;
      const auto relative = joined(dir, e->d_name);
      switch (kind_of(::dirfd(stream), e->d_name, why)) {
        case entry_kind::file: out.files.push_back({relative, {}}); break;
        case entry_kind::directory: pending.push_back({relative, depth + 1}); break;
        case entry_kind::skipped: out.skipped.push_back({relative, why}); break;
        case entry_kind::gone: break;  // removed while listed
      }
      errno = 0;  // readdir's own failure is told by errno at its end
    }
    if (errno != 0) out.unwalked.push_back({dir.empty() ? "." : dir, std::strerror(errno)});
    ::closedir(stream);
    if (listed > max_walk_entries) {
      out.unwalked.push_back({dir.empty() ? "." : dir, "more than " + std::to_string(max_walk_entries) + " entries"});
      break;
    }
  }
  for (auto* list : {&out.files, &out.skipped, &out.unwalked}) std::sort(list->begin(), list->end(), path_order);
  return out;
}

int open_beneath(const std::string& root, const std::string& relative, std::string& error) {
  const auto slash = relative.rfind('/');
  const auto dir = slash == std::string::npos ? std::string() : relative.substr(0, slash);
  const auto name = slash == std::string::npos ? relative : relative.substr(slash + 1);
  fd_guard parent{open_directory_beneath(root, dir, error)};
  if (parent.fd < 0) return -1;
  // O_NONBLOCK: a file that became a FIFO since it was listed never blocks the open.
  const int fd = ::openat(parent.fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) error = std::strerror(errno);
  return fd;
}

}  // namespace gistproxy::proxy
