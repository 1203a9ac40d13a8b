#include "proxy/commands/wrap_folders.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "proxy/commands/wiring.hpp"
#include "proxy/store/blob_io.hpp"

namespace gistproxy::proxy {
namespace fs = std::filesystem;
namespace {

constexpr const char* overlay_prefix = "overlay-";
constexpr std::size_t max_swept_entries = 4096;  // a cache folder holds a few logs and overlays

std::string env_of(const char* const* environ, const char* name) {
  const std::size_t n = std::strlen(name);
  for (auto e = environ; e && *e; ++e)
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return {};
}

// The folder is there, a directory and the user's; tightened to 0700.
// `in_shared_folder` (/tmp): not a link either, which another user could
// have planted. Empty when so, else why not.
std::string own_private_folder(const fs::path& dir, bool in_shared_folder) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return dir.string() + ": " + std::strerror(errno);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (in_shared_folder ? O_NOFOLLOW : 0));
  if (fd < 0) return dir.string() + ": not a folder of its own (" + std::strerror(errno) + ")";
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) problem = dir.string() + ": " + std::strerror(errno);
  else if (st.st_uid != ::geteuid())
    problem = dir.string() + " belongs to another user (uid " + std::to_string(st.st_uid) +
              "): its logs and blobs would not be private; set XDG_CACHE_HOME or --store";
  else if ((st.st_mode & 077) && ::fchmod(fd, 0700) != 0)
    problem = dir.string() + ": cannot make it private: " + std::strerror(errno);
  ::close(fd);
  return problem;
}

// Holds an exclusive lock on `fd` without waiting; false when another holds it.
bool lock_now(int fd) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0)
    if (errno != EINTR) return false;
  return true;
}

// Removes the overlays no live wrap holds locked: a wrap killed outright
// leaves its overlay (perhaps a copy of the user's API key) behind, and
// its lock went with it.
void sweep_orphaned_overlays(const fs::path& cache) {
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::directory_iterator it(cache, ec), end; !ec && it != end && seen < max_swept_entries; it.increment(ec), ++seen) {
    const auto name = it->path().filename().string();
    if (name.rfind(overlay_prefix, 0) != 0 || !it->is_directory(ec) || it->is_symlink(ec)) continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    std::error_code removed;
    if (lock_now(fd)) fs::remove_all(it->path(), removed);
    ::close(fd);
  }
}

}  // namespace

std::optional<fs::path> wrap_cache_folder(const char* const* environ, std::string& error) {
  fs::path dir;
  bool shared = false;
  if (auto xdg = env_of(environ, "XDG_CACHE_HOME"); !xdg.empty()) dir = fs::path(xdg) / "gistproxy";
  else if (auto home = env_of(environ, "HOME"); !home.empty()) dir = fs::path(home) / ".cache" / "gistproxy";
  else {
    // No home: a folder in the shared temp folder, named for the user (as
    // tmux's), which another user may have made first: refused then.
    std::error_code ec;
    auto tmp = fs::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    dir = tmp / ("gistproxy-" + std::to_string(::geteuid()));
    shared = true;
  }
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);  // the user's own cache folder: its usual mode
  error = own_private_folder(dir, shared);
  if (!error.empty()) return std::nullopt;
  return dir;
}

wrap_overlay::wrap_overlay(const fs::path& cache) {
  // One wrap at a time sweeps or makes an overlay: one being made is never
  // taken for an orphan before its maker locks it.
  const int guard = ::open((cache / "overlays.lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (guard >= 0)
    while (::flock(guard, LOCK_EX) != 0 && errno == EINTR) {
    }
  sweep_orphaned_overlays(cache);
  std::string dir = (cache / (std::string(overlay_prefix) + "XXXXXX")).string();
  if (::mkdtemp(dir.data())) {
    lock_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (lock_fd_ >= 0 && lock_now(lock_fd_)) {
      path_ = dir;
    } else {
      if (lock_fd_ >= 0) ::close(lock_fd_);
      lock_fd_ = -1;
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  }
  if (guard >= 0) ::close(guard);
}

wrap_overlay::~wrap_overlay() { remove(); }

void wrap_overlay::remove() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
  path_.clear();
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

std::optional<std::string> store_write_problem(const std::string& store) {
  if (is_s3_store(store)) return std::nullopt;
  std::error_code ec;
  if (!store::create_private_directories(store, ec)) return ec.message();
  const auto probe = (fs::path(store) / (".write-probe-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return std::string(std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

}  // namespace gistproxy::proxy
