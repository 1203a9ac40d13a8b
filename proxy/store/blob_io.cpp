#include "proxy/store/blob_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <utility>

namespace gistproxy::store {
namespace fs = std::filesystem;
using namespace gistproxy::rewrite;

namespace {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(std::size_t(n));
  }
  return true;
}

}  // namespace

std::int64_t mtime_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return st.st_mtim.tv_sec;
}

void set_mtime(const fs::path& p, std::int64_t when) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = when;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  ::utimensat(AT_FDCWD, p.c_str(), times, 0);
}

// Opened non-blocking (a FIFO never hangs the open), then fstat: the checks
// are on what was opened, not on what the path named a moment before.
std::optional<get_result> read_regular_file(const fs::path& path, std::uint64_t limit, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    count_descriptor_shortage(errno);
    if (errno == ENOENT) return get_result{blob_error::not_found, {}, {}, "no such blob"};
    if (errno == ELOOP) return get_result{blob_error::integrity, {}, {}, "blob path is a symbolic link"};
    return get_result{blob_error::io, {}, {}, std::string("cannot open blob: ") + std::strerror(errno)};
  }
  struct stat st {};
  std::optional<get_result> failure;
  if (::fstat(fd, &st) != 0) failure = get_result{blob_error::io, {}, {}, std::string("cannot stat blob: ") + std::strerror(errno)};
  else if (!S_ISREG(st.st_mode)) failure = get_result{blob_error::integrity, {}, {}, "blob path is not a regular file"};
  else if (std::uint64_t(st.st_size) > limit) failure = get_result{blob_error::integrity, {}, {}, "blob file is larger than any blob"};
  if (!failure) {
    out.resize(std::size_t(st.st_size));
    std::size_t got = 0;
    while (got < out.size()) {
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += std::size_t(n);
    }
    out.resize(got);  // a file that shrank under us reads short: the checks after catch it
  }
  ::close(fd);
  return failure;
}

int write_atomically(const fs::path& path, std::string_view data, bool durable, std::string& error) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  auto tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rng());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    count_descriptor_shortage(err);
    error = "cannot create " + tmp.string() + ": " + std::strerror(err);
    return err;
  }
  bool ok = write_all(fd, data) && (!durable || ::fsync(fd) == 0);
  ok = (::close(fd) == 0) && ok;
  // rename() is atomic: a concurrent writer of the same bytes just replaces
  // an identical file, and a damaged file is replaced whole.
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno ? errno : EIO;
    ::unlink(tmp.c_str());
    error = "cannot write blob: " + std::string(std::strerror(err));
    return err;
  }
  return 0;
}

// mkdir(0700) from the deepest missing folder down, not create_directories
// (0777 less the umask: blobs readable by every local user).
bool create_private_directories(const fs::path& dir, std::error_code& ec) {
  ec.clear();
  const auto path = dir.lexically_normal();
  if (path.empty()) return ec = std::make_error_code(std::errc::no_such_file_or_directory), false;
  if (::mkdir(path.c_str(), 0700) == 0) return true;
  int err = errno;
  if (err == ENOENT && path.has_parent_path() && path.parent_path() != path) {
    if (!create_private_directories(path.parent_path(), ec)) return false;
    if (::mkdir(path.c_str(), 0700) == 0) return true;
    err = errno;
  }
  if (err == EEXIST) {
    if (fs::is_directory(path, ec)) return true;
    if (!ec) ec = std::make_error_code(std::errc::not_a_directory);
    return false;
  }
  ec.assign(err, std::generic_category());
  return false;
}

namespace {

std::atomic<std::uint64_t> syncs{0};
std::atomic<std::uint64_t> shortages{0};
thread_local std::set<std::string>* batched = nullptr;  // this thread's open batch, if any

void sync_now(const fs::path& dir) {
  if (int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
    ++syncs;
  } else {
    count_descriptor_shortage(errno);
  }
}

}  // namespace

void sync_directory(const fs::path& dir) {
  if (batched) batched->insert(dir.native());  // bounded: a tenant has 256 blob directories
  else sync_now(dir);
}

directory_sync_batch::directory_sync_batch() {
  if (batched) return;
  batched = new std::set<std::string>;
  owner_ = true;
}

directory_sync_batch::~directory_sync_batch() {
  if (!owner_) return;
  std::unique_ptr<std::set<std::string>> dirs(std::exchange(batched, nullptr));
  for (const auto& d : *dirs) sync_now(d);
}

std::uint64_t directory_syncs() { return syncs.load(); }

std::uint64_t descriptor_shortages() { return shortages.load(); }

void count_descriptor_shortage(int err) {
  if (err == EMFILE || err == ENFILE) ++shortages;
}

}  // namespace gistproxy::store
