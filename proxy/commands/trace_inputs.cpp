#include "proxy/commands/trace_inputs.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "proxy/commands/input_files.hpp"

namespace gistproxy::proxy {
namespace {

namespace fs = std::filesystem;

// One file's trace, or an exception whose first word classifies it.
struct file_error : std::runtime_error {
  file_error(std::string reason, const std::string& detail) : std::runtime_error(detail), why(std::move(reason)) {}
  std::string why;
};

rewrite::recorded_trace read_one(const fs::path& p, const std::string& format) {
  std::string error;
  auto bytes = read_input_file(p.string(), max_input_bytes, error);
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

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) throw std::runtime_error("cannot read the directory: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec) && it->path().filename().string().rfind('.', 0) != 0) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

trace_walk walk_trace(const std::string& arg, const std::string& format, const trace_part_sink& feed,
                      const std::function<void(const std::string& file)>& on_file) {
  trace_walk w;
  w.directory = fs::is_directory(arg);
  if (!w.directory) {
    auto t = read_one(arg, format);  // its file_error is the argument's error
    merge(w, t, "");
    feed(t);
    if (on_file) on_file(arg);
    return w;
  }
  const auto files = files_under(arg);
  if (files.empty()) throw std::runtime_error("no files in the directory");
  std::string last_error;
  for (const auto& f : files) {
    const auto relative = fs::relative(f, arg).string();
    try {
      auto t = read_one(f, format);
      merge(w, t, relative + ": ");
      feed(t);
    } catch (const file_error& e) {
      auto& skipped = w.skipped[e.why];
      if (skipped.count++ == 0) skipped.example = relative;
      last_error = relative + ": " + e.what();
    }
    if (on_file) on_file(relative);
  }
  if (!w.files) throw std::runtime_error("no file in it is a trace (" + last_error + ")");
  return w;
}

}  // namespace gistproxy::proxy
