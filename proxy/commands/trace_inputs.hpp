// The traces `gistproxy replay` reads, one part at a time: a file argument is
// one trace; a directory argument is one trace of every file under it
// (recursively, in path order: Codex keeps sessions under YYYY/MM/DD/, Claude
// Code one folder per project), each file read with its own format. Only one
// file is in memory at a time, so gigabytes of sessions replay in the memory
// of the largest file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rewrite/replay/trace_formats.hpp"

namespace gistproxy::proxy {

struct skipped_files {
  std::uint64_t count = 0;
  std::string example;  // the first such file, and why
};

struct trace_walk {
  bool directory = false;
  std::string format;  // the files' format, "mixed" when they differ
  bool rebuilt = false;
  std::uint64_t files = 0;  // files replayed
  std::vector<std::string> notes;  // entries skipped inside files, and why
  // Files of a directory not replayed, by why: unreadable (not a regular
  // file, too large), not a trace (no format recognised it), no requests.
  // Also what a directory held that is not read: "not a regular file"
  // (FIFOs, sockets, devices), "unreadable
  // directory" (a walk error), "kernel pseudo-filesystem" (/proc mounted in
  // the tree), "over the walk's byte budget" (walk_limits).
  std::map<std::string, skipped_files> skipped;
  bool incomplete = false;  // a directory under it could not be read: files may be missing
};

using trace_part_sink = std::function<void(const rewrite::recorded_trace&)>;

// How much one argument may make replay read: each file at most `per_file`
// bytes; a directory's files are read while fewer than `per_walk` bytes were
// (past it the rest are counted as skipped, so the walk ends however much
// the tree holds).
struct walk_limits {
  std::uint64_t per_file = 1ull << 30;
  std::uint64_t per_walk = 64ull << 30;
};

// Reads `arg` and hands each file's trace to `feed`, in order. A file argument
// that cannot be read, or a directory in which no file could, throws
// std::runtime_error with the reason; a directory's other files are skipped
// and counted. `on_file` (may be empty) is called after each file.
trace_walk walk_trace(const std::string& arg, const std::string& format, const trace_part_sink& feed,
                      const std::function<void(const std::string& file)>& on_file = {}, walk_limits limits = {});

}  // namespace gistproxy::proxy
