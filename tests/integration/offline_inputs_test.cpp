// replay, report and tokens read files an operator names: a FIFO, a device or
// an endless stream is refused with a reason, never read until memory runs out.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <fstream>

#include "tests/integration/harness.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;

namespace {

struct finished {
  int status;
  std::string output;
};

finished run(std::vector<std::string> args) {
  args.insert(args.begin(), gistproxy_binary());
  child_process p(args);
  const int status = p.wait(std::chrono::seconds(60));
  return {status, p.output()};
}

}  // namespace

TEST_CASE("replay, report and tokens refuse /dev/zero and a FIFO with a clear error") {
  const auto fifo = temp_path("trace.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // nobody writes to it: reading it would wait forever
  for (const std::string& input : {std::string("/dev/zero"), fifo.string()}) {
    for (const std::vector<std::string>& command : {std::vector<std::string>{"replay"}, {"report"}, {"tokens"}}) {
      CAPTURE(input, command[0]);
      auto args = command;
      args.push_back(input);
      auto r = run(args);
      CHECK(r.status != 0);  // was: an abort after gigabytes (/dev/zero) or a hang (FIFO)
      CHECK(r.status != -1);
      CHECK(r.output.find("not a regular file") != std::string::npos);
    }
  }
}

TEST_CASE("replay --format refuses a file its reader finds nothing in, instead of reporting 0 turns") {
  const auto file = temp_path("not-codex.json");
  std::ofstream(file) << R"({"hello": ["any", "json"]})";
  auto r = run({"replay", "--format", "codex", file.string()});
  CHECK(r.status != 0);
  CHECK(r.output.find("not a codex trace") != std::string::npos);
}
