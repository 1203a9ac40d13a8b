// Files the offline commands (replay, report, tokens) read whole: only
// regular files, at most `max_bytes` (/dev/zero or a file still growing past
// the bound is refused with a reason, never read forever). A FIFO is read
// only where the user named it (`replay <(zcat rollout.jsonl.gz)`), never
// when found inside a directory. The files of kernel pseudo-filesystems
// (/proc, /sys, ...) are refused: they claim no size, and some stream
// without end (/proc/self/pagemap: gigabytes). A path may be longer than
// PATH_MAX: that limits one system call, not a file's name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gistproxy::proxy {

inline constexpr std::uint64_t max_input_bytes = 1ull << 30;

enum class input_kinds { regular_only, regular_or_fifo };

// The file's bytes, or nullopt with `error` set ("not a regular file", "larger than ...").
std::optional<std::string> read_input_file(const std::string& path, std::uint64_t max_bytes, std::string& error,
                                           input_kinds kinds = input_kinds::regular_only);
// The same from a descriptor opened for reading (taken: closed before return).
std::optional<std::string> read_input_fd(int fd, std::uint64_t max_bytes, std::string& error,
                                         input_kinds kinds = input_kinds::regular_only);

// open(2) of `path` whatever its length: past PATH_MAX one directory at a
// time (from / or the working directory, links followed as open follows them).
int open_any_length(const std::string& path, int flags);

// Whether the descriptor's file lies on a kernel pseudo-filesystem (procfs,
// sysfs, debugfs, tracefs, cgroupfs, ...), whose files are no one's traces.
bool on_kernel_pseudo_filesystem(int fd);
inline constexpr const char* kernel_pseudo_file_error =
    "a kernel pseudo-file (/proc, /sys): it has no size of its own and may never end";

// Whether `path` names a regular file (what report streams line by line); else `error`.
bool is_regular_input(const std::string& path, std::string& error);

}  // namespace gistproxy::proxy
