// The files under a directory, as `gistproxy replay DIR` reads them: every
// regular file (dot files left out), in path order, each opened relative to
// its own directory's descriptor so that no path length limit applies
// (PATH_MAX is a limit of one system call, not of a tree). What is not read
// is said, never silently lost: FIFOs, sockets and devices are listed as
// skipped, and a directory that cannot be opened or read (EMFILE, EACCES,
// a tree deeper than the walk goes) as a walk error, while the walk goes on
// with the rest. Directories of kernel pseudo-filesystems (/proc, /sys) are
// listed as skipped, never walked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gistproxy::proxy {

struct walked_entry {
  std::string relative;  // path under the directory walked, '/'-separated
  std::string problem;   // empty for a regular file to read; else why it is not read
};

struct directory_listing {
  std::vector<walked_entry> files;     // regular files, path order
  std::vector<walked_entry> skipped;   // FIFOs, sockets, devices; directories of kernel pseudo-filesystems
  std::vector<walked_entry> unwalked;  // directories that could not be read, and why
};

inline constexpr std::size_t max_walk_depth = 128;
inline constexpr std::size_t max_walk_entries = 1'000'000;  // files and directories listed, in all

// Why a directory of a kernel pseudo-filesystem is not walked: its files
// claim no size and some never end (/proc/self/pagemap).
inline constexpr const char* kernel_pseudo_directory =
    "a directory of a kernel pseudo-filesystem (/proc, /sys): its files are not traces";

// Whether `path` (of any length) names a directory, links followed.
bool names_directory(const std::string& path);

// Lists `root` (which must be a directory, and of no kernel pseudo-filesystem:
// nullopt with `error` otherwise); `root` may be longer than PATH_MAX.
std::optional<directory_listing> list_directory(const std::string& root, std::string& error);

// Opens `relative` under `root` one directory at a time (openat, links to
// directories not followed), for reading; -1 with `error` set.
int open_beneath(const std::string& root, const std::string& relative, std::string& error);

}  // namespace gistproxy::proxy
