#include "proxy/commands/trace_inputs.hpp"

#include <algorithm>
#include <stdexcept>

#include "proxy/commands/directory_walk.hpp"
#include "proxy/commands/input_files.hpp"
#include "telemetry/number_format.hpp"

namespace gistproxy::proxy {
namespace {

// One file's trace, or an exception whose first word classifies it.
struct file_error : std::runtime_error {
  file_error(std::string reason, const std::string& detail) : std::runtime_error(detail), why(std::move(reason)) {}
  std::string why;
};

// `bytes`' trace, or a file_error naming why there is none.
rewrite::recorded_trace trace_of(std::optional<std::string> bytes, const std::string& error, const std::string& format) {
  if (!bytes) throw file_error("unreadable", "cannot open: " + error);
  rewrite::recorded_trace t;
  try {
    t = rewrite::read_trace(*bytes, format);
  } catch (const std::exception& e) {
    throw file_error("not a trace", e.what());
  }
  // A forced --format whose reader found nothing is a refusal, not "0 turns".
  if (t.requests.empty())
    throw file_error("no requests", format.empty() ? "no LLM requests in it"
                                                   : "not a " + format + " trace: its reader found no requests in it");
  return t;
}

void merge(trace_walk& w, const rewrite::recorded_trace& t, const std::string& prefix) {
  if (w.format.empty()) w.format = t.format;
  else if (w.format != t.format) w.format = "mixed";
  w.rebuilt |= t.rebuilt;
  for (const auto& n : t.notes) w.notes.push_back(prefix + n);
  ++w.files;
}

void count_skipped(trace_walk& w, const std::string& why, const std::string& relative, const std::string& detail) {
  auto& skipped = w.skipped[why];
  if (skipped.count++ == 0) skipped.example = relative + ": " + detail;
}

}  // namespace

trace_walk walk_trace(const std::string& arg, const std::string& format, const trace_part_sink& feed,
                      const std::function<void(const std::string& file)>& on_file, walk_limits limits) {
  trace_walk w;
  w.directory = names_directory(arg);  // of any length: PATH_MAX bounds a system call, not a path
  if (!w.directory) {
    // A FIFO named here is read (`replay <(zcat rollout.gz)`); its file_error is the argument's error.
    std::string error;
    auto t = trace_of(read_input_file(arg, limits.per_file, error, input_kinds::regular_or_fifo), error, format);
    merge(w, t, "");
    feed(t);
    if (on_file) on_file(arg);
    return w;
  }
  std::string error;
  auto listing = list_directory(arg, error);
  if (!listing) throw std::runtime_error("cannot read the directory: " + error);
  // Nothing under the directory goes unsaid: what is not read is counted.
  for (const auto& e : listing->skipped)
    count_skipped(w, e.problem == kernel_pseudo_directory ? "kernel pseudo-filesystem" : "not a regular file",
                  e.relative, e.problem);
  for (const auto& e : listing->unwalked) count_skipped(w, "unreadable directory", e.relative, e.problem);
  w.incomplete = !listing->unwalked.empty();
  if (listing->files.empty())
    throw std::runtime_error(w.incomplete ? "no file could be read in it (" + listing->unwalked[0].relative + ": " +
                                                listing->unwalked[0].problem + ")"
                                          : "no files in the directory");
  std::string last_error;
  std::uint64_t bytes_read = 0;
  for (const auto& f : listing->files) {
    const auto& relative = f.relative;
    if (bytes_read >= limits.per_walk) {
      count_skipped(w, "over the walk's byte budget", relative,
                    "not read: the files before it held " + telemetry::thousands(limits.per_walk) + " bytes or more");
      continue;
    }
    try {
      std::string why;
      const int fd = open_beneath(arg, relative, why);
      auto bytes = fd < 0 ? std::nullopt : read_input_fd(fd, limits.per_file, why);
      if (bytes) bytes_read += bytes->size();
      auto t = trace_of(std::move(bytes), why, format);
      merge(w, t, relative + ": ");
      feed(t);
    } catch (const file_error& e) {
      count_skipped(w, e.why, relative, e.what());
      last_error = relative + ": " + e.what();
    }
    if (on_file) on_file(relative);
  }
  if (!w.files) throw std::runtime_error("no file in it is a trace (" + last_error + ")");
  return w;
}

}  // namespace gistproxy::proxy
