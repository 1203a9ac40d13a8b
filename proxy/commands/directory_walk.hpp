// The files under a directory, as `gistproxy replay DIR` reads them: every
// regular file (dot files left out), in path order, each opened relative to
// its own directory's descriptor so that no path length limit applies
// (PATH_MAX is a limit of one system call, not of a tree). What is not read
// is said, never silently lost: FIFOs, sockets and devices are listed as
// skipped, and a directory that cannot be opened or read (EMFILE, EACCES,
// a tree deeper than the walk goes) as a walk error, while the walk goes on
// with the rest.
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
  std::vector<walked_entry> skipped;   // not regular files: FIFOs, sockets, devices
  std::vector<walked_entry> unwalked;  // directories that could not be read, and why
};

inline constexpr std::size_t max_walk_depth = 128;
inline constexpr std::size_t max_walk_entries = 1'000'000;  // files and directories listed, in all

// Lists `root` (which must be a directory: nullopt with `error` otherwise).
std::optional<directory_listing> list_directory(const std::string& root, std::string& error);

// Opens `relative` under `root` one directory at a time (openat, links to
// directories not followed), for reading; -1 with `error` set.
int open_beneath(const std::string& root, const std::string& relative, std::string& error);

}  // namespace gistproxy::proxy
