// `gistproxy replay` on folders as users have them: a FIFO it is named (a
// process substitution) is read; inside a directory, FIFOs, sockets and
// devices are counted, never read; a path longer than PATH_MAX is read like
// any other; a directory that cannot be walked is counted and makes the exit
// status say the figures are incomplete, while the rest is replayed.
#include <catch2/catch.hpp>
#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "tests/integration/harness.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;

namespace {

std::string rollout(const std::string& text) {
  auto item = [](const std::string& payload) {
    return R"({"timestamp":"t","type":"response_item","payload":)" + payload + "}\n";
  };
  return item(R"({"type":"message","role":"user","content":[{"type":"input_text","text":")" + text + R"("}]})") +
         item(R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]})");
}

nlohmann::json json_of(const std::string& output) { return nlohmann::json::parse(output.substr(output.find('{'))); }

// Makes `depth` nested directories named `name` under `root` (each made
// relative to its parent, so the path may outgrow PATH_MAX) and writes
// `content` into `file` at the bottom.
void nest(const std::filesystem::path& root, const std::string& name, int depth, const std::string& file,
          const std::string& content) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  for (int i = 0; i < depth; ++i) {
    REQUIRE(::mkdirat(fd, name.c_str(), 0700) == 0);
    const int next = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY);
    ::close(fd);
    REQUIRE(next >= 0);
    fd = next;
  }
  if (!file.empty()) {
    const int out = ::openat(fd, file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(out >= 0);
    REQUIRE(::write(out, content.data(), content.size()) == ssize_t(content.size()));
    ::close(out);
  }
  ::close(fd);
}

}  // namespace

TEST_CASE("replay reads a FIFO it is named, as a process substitution feeds it") {
  const auto fifo = temp_path("rollout.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  child_process p({gistproxy_binary(), "replay", "--json", "--tokenizer", "estimate", fifo.string()});
  // The writer comes late, as a process substitution's may: replay must wait
  // for it, not read "end of file" from a FIFO nobody writes yet. Opened
  // without blocking, so a replay that gave up fails this test instead of
  // hanging it (ENXIO: no reader has the FIFO open).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int writer = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 && errno == ENXIO && p.running() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(writer >= 0);
  ::fcntl(writer, F_SETFL, ::fcntl(writer, F_GETFL) & ~O_NONBLOCK);
  const auto bytes = rollout("from a pipe");
  for (std::size_t at = 0; at < bytes.size();) {
    const auto n = ::write(writer, bytes.data() + at, bytes.size() - at);
    REQUIRE(n > 0);
    at += std::size_t(n);
  }
  ::close(writer);
  REQUIRE(p.wait(std::chrono::seconds(60)) == 0);
  CHECK(json_of(p.output())["turns"] == 1);
}

TEST_CASE("replay of a directory counts what it cannot read, reads past PATH_MAX, and never loses traces silently") {
  const auto root = temp_path("folders");
  std::filesystem::create_directories(root / "a");
  std::ofstream(root / "a" / "rollout-1.jsonl") << rollout("first");
  REQUIRE(::mkfifo((root / "a" / "stuck.fifo").c_str(), 0600) == 0);          // never written: reading it would hang
  REQUIRE(::mknod((root / "a" / "agent.sock").c_str(), S_IFSOCK | 0600, 0) == 0);
  nest(root, std::string(200, 'd'), 25, "rollout-deep.jsonl", rollout("deep"));  // ~5,000 bytes of path

  SECTION("every readable trace is replayed; the rest is counted") {
    child_process p({gistproxy_binary(), "replay", "--json", "--tokenizer", "estimate", root.string()});
    REQUIRE(p.wait(std::chrono::seconds(60)) == 0);
    const auto t = json_of(p.output())["traces"][0];
    CHECK(t["files"] == 2);  // the deep one too
    CHECK(t["turns"] == 2);
    CHECK(t["files_skipped"] == nlohmann::json{{"not a regular file", 2}});
  }
  SECTION("a directory the walk cannot read is counted and the exit status says the figures are incomplete") {
    nest(root / "a", "x", 140, "", "");  // deeper than the walk goes
    child_process p({gistproxy_binary(), "replay", "--json", "--tokenizer", "estimate", root.string()});
    CHECK(p.wait(std::chrono::seconds(60)) == 1);
    const auto t = json_of(p.output())["traces"][0];
    CHECK(t["files"] == 2);
    CHECK(t["files_skipped"].value("unreadable directory", 0) == 1);
    CHECK(p.output().find("could not be read") != std::string::npos);
  }
  // rm walks relative to each directory too: the deep tree goes as well.
  child_process({"rm", "-rf", root.string()}).wait(std::chrono::seconds(60));
}

TEST_CASE("replay reads a file and a directory named by a path longer than PATH_MAX") {
  const auto root = temp_path("long-arguments");
  std::filesystem::create_directories(root);
  const std::string name(200, 'd');
  nest(root, name, 25, "rollout-deep.jsonl", rollout("deep"));  // ~5,000 bytes of path
  std::string deep = root.string();
  for (int i = 0; i < 25; ++i) deep += "/" + name;
  REQUIRE(deep.size() > PATH_MAX);
  child_process p({gistproxy_binary(), "replay", "--json", "--tokenizer", "estimate", deep, deep + "/rollout-deep.jsonl"});
  CHECK(p.wait(std::chrono::seconds(60)) == 0);
  const auto traces = json_of(p.output())["traces"];
  REQUIRE(traces.size() == 2);  // was: "File name too long" for both, the report silent about them
  CHECK(traces[0]["files"] == 1);
  CHECK(traces[0]["turns"] == 1);
  CHECK(traces[1]["turns"] == 1);
  child_process({"rm", "-rf", root.string()}).wait(std::chrono::seconds(60));
}

TEST_CASE("replay never reads kernel pseudo-files: /proc/self is refused at once, a link to one is counted") {
  SECTION("a pseudo-filesystem's directory") {
    // Was: /proc/self/pagemap and the like read to their 1 GiB bound (29 s, 2.1 GB resident).
    child_process p({gistproxy_binary(), "replay", "--json", "--tokenizer", "estimate", "/proc/self"});
    CHECK(p.wait(std::chrono::seconds(60)) == 1);
    CHECK(p.output().find("kernel pseudo-filesystem") != std::string::npos);
  }
  SECTION("a pseudo-file named") {
    // Was: 1 GiB read (its bound) before "larger than 1024 MiB".
    child_process p({gistproxy_binary(), "replay", "--json", "--tokenizer", "estimate", "/proc/self/pagemap"});
    CHECK(p.wait(std::chrono::seconds(60)) == 1);
    CHECK(p.output().find("kernel pseudo-file") != std::string::npos);
  }
  SECTION("a link to a pseudo-file inside a directory") {
    const auto root = temp_path("pseudo-link");
    std::filesystem::create_directories(root);
    std::ofstream(root / "rollout.jsonl") << rollout("real");
    std::filesystem::create_symlink("/proc/self/pagemap", root / "pagemap");
    child_process p({gistproxy_binary(), "replay", "--tokenizer", "estimate", root.string()});
    CHECK(p.wait(std::chrono::seconds(60)) == 0);
    CHECK(p.output().find("1 files, 1 turns") != std::string::npos);
    // Was: read to its 1 GiB bound, then "larger than 1024 MiB".
    CHECK(p.output().find("files skipped: 1 unreadable (e.g. pagemap: cannot open: a kernel pseudo-file") !=
          std::string::npos);
  }
}
