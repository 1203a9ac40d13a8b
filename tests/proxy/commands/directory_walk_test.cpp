#include "proxy/commands/directory_walk.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace gistproxy::proxy;
namespace fs = std::filesystem;

namespace {

// A scratch directory, removed with everything in it.
struct scratch {
  scratch() : path((fs::temp_directory_path() / "gistproxy-dirwalk-XXXXXX").string()) {
    REQUIRE(::mkdtemp(path.data()));
  }
  ~scratch() { fs::remove_all(path); }
  void file(const std::string& relative, const std::string& text = "x") {
    fs::create_directories(fs::path(path / fs::path(relative)).parent_path());
    std::ofstream(fs::path(path) / relative) << text;
  }
  fs::path operator/(const std::string& relative) const { return fs::path(path) / relative; }
  std::string path;
};

std::vector<std::string> relatives(const std::vector<walked_entry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.relative);
  return out;
}

std::string problem_of(const std::vector<walked_entry>& entries, const std::string& relative) {
  for (const auto& e : entries)
    if (e.relative == relative) return e.problem;
  return "(not listed)";
}

}  // namespace

TEST_CASE("list_directory lists every regular file in path order and leaves dot files and dot directories out") {
  scratch d;
  for (const auto* name : {"z.jsonl", "a/c/d.jsonl", "a/b.jsonl", "a-b.jsonl", ".hidden", ".git/config", "a/.swp"})
    d.file(name);
  std::string error;
  auto listing = list_directory(d.path, error);
  REQUIRE(listing);
  // Path order: a directory's files before a sibling that sorts after its name's prefix.
  CHECK(relatives(listing->files) == std::vector<std::string>{"a/b.jsonl", "a/c/d.jsonl", "a-b.jsonl", "z.jsonl"});
  CHECK(listing->skipped.empty());
  CHECK(listing->unwalked.empty());
}

TEST_CASE("list_directory reads a link to a file but lists links to directories broken links and FIFOs as skipped") {
  scratch d;
  d.file("real/trace.jsonl");
  fs::create_symlink(d / "real/trace.jsonl", d / "to_file");
  fs::create_directory_symlink(d.path, d / "real/loop");  // followed, it would never end
  fs::create_symlink(d / "nowhere", d / "broken");
  REQUIRE(::mkfifo((d / "pipe").c_str(), 0600) == 0);
  std::string error;
  auto listing = list_directory(d.path, error);
  REQUIRE(listing);
  CHECK(relatives(listing->files) == std::vector<std::string>{"real/trace.jsonl", "to_file"});
  CHECK(relatives(listing->skipped) == std::vector<std::string>{"broken", "pipe", "real/loop"});
  CHECK(problem_of(listing->skipped, "real/loop") == "a symbolic link to a directory (not followed)");
  CHECK(problem_of(listing->skipped, "broken") == "a broken symbolic link");
  CHECK(problem_of(listing->skipped, "pipe") == "a FIFO");
  CHECK(listing->unwalked.empty());
}

TEST_CASE("list_directory refuses a root that is a file or missing") {
  scratch d;
  d.file("trace.jsonl");
  std::string error;
  CHECK_FALSE(list_directory((d / "trace.jsonl").string(), error));
  CHECK(error == "not a directory");
  error.clear();
  CHECK_FALSE(list_directory((d / "missing").string(), error));
  CHECK_FALSE(error.empty());
  CHECK(names_directory(d.path));
  CHECK_FALSE(names_directory((d / "trace.jsonl").string()));
}

TEST_CASE("list_directory names a directory deeper than the walk goes as unwalked and lists what is above it") {
  scratch d;
  std::string deep;
  for (std::size_t level = 1; level <= max_walk_depth + 1; ++level) deep += (deep.empty() ? "" : "/") + std::string("d");
  const std::string last_walked = deep.substr(0, deep.size() - 2);  // at max_walk_depth
  d.file(last_walked + "/kept.jsonl");
  d.file(deep + "/lost.jsonl");
  std::string error;
  auto listing = list_directory(d.path, error);
  REQUIRE(listing);
  CHECK(relatives(listing->files) == std::vector<std::string>{last_walked + "/kept.jsonl"});
  REQUIRE(listing->unwalked.size() == 1);
  CHECK(listing->unwalked[0].relative == deep);
  CHECK(listing->unwalked[0].problem == "deeper than 128 levels");
}

TEST_CASE("open_beneath opens a listed file but never through a link to a directory") {
  scratch d;
  d.file("real/trace.jsonl", "hello");
  fs::create_directory_symlink(d / "real", d / "link");
  std::string error;
  const int fd = open_beneath(d.path, "real/trace.jsonl", error);
  REQUIRE(fd >= 0);
  char buffer[8] = {};
  CHECK(::read(fd, buffer, sizeof buffer) == 5);
  CHECK(std::string(buffer) == "hello");
  ::close(fd);
  CHECK(open_beneath(d.path, "link/trace.jsonl", error) == -1);
  CHECK_FALSE(error.empty());
  error.clear();
  CHECK(open_beneath(d.path, "real/missing.jsonl", error) == -1);
  CHECK_FALSE(error.empty());
}
