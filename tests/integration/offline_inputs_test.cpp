// replay, report and tokens read files an operator names: a FIFO, a device or
// an endless stream is refused with a reason, never read until memory runs out.
#include <catch2/catch.hpp>
#include <sys/resource.h>
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

TEST_CASE("replay, report and tokens refuse /dev/zero, and report and tokens a FIFO, with a clear error") {
  const auto fifo = temp_path("trace.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // nobody writes to it: reading it would wait forever
  for (const std::string& input : {std::string("/dev/zero"), fifo.string()}) {
    for (const std::vector<std::string>& command : {std::vector<std::string>{"replay"}, {"report"}, {"tokens"}}) {
      CAPTURE(input, command[0]);
      if (input == fifo.string() && command[0] == "replay") continue;  // replay reads a FIFO it is named (replay_folders_test)
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

TEST_CASE("replay walks a directory recursively, each file with its own format, and counts what it skipped") {
  // Codex keeps sessions under YYYY/MM/DD/; a README and a stray file sit beside them.
  const auto root = temp_path("sessions");
  std::filesystem::create_directories(root / "2026" / "11" / "24");
  std::filesystem::create_directories(root / "2026" / "11" / "25");
  auto rollout = [](const std::string& text) {
    auto item = [](const std::string& payload) {
      return R"({"timestamp":"t","type":"response_item","payload":)" + payload + "}\n";
    };
    return item(R"({"type":"message","role":"user","content":[{"type":"input_text","text":")" + text + R"("}]})") +
           item(R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]})");
  };
  std::ofstream(root / "2026" / "11" / "24" / "rollout-a.jsonl") << rollout("first");
  std::ofstream(root / "2026" / "11" / "25" / "rollout-b.jsonl") << rollout("second");
  std::ofstream(root / "2026" / "11" / "25" / "cline.json")
      << R"([{"role":"user","content":[{"type":"text","text":"<task>x</task>"}]},{"role":"assistant","content":"y"}])";
  std::ofstream(root / "README.md") << "# my sessions\n";
  std::ofstream(root / ".hidden") << "ignored";

  auto r = run({"replay", "--json", root.string()});
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  REQUIRE(j["traces"].size() == 1);
  const auto& t = j["traces"][0];
  CHECK(t["files"] == 3);
  CHECK(t["format"] == "mixed");
  CHECK(t["turns"] == 3);
  CHECK(t["conversations"] == 3);
  CHECK(t["files_skipped"] == nlohmann::json{{"not a trace", 1}});

  // Forced to one format, the others are skipped, not fatal.
  auto codex = run({"replay", "--json", "--format", "codex", root.string()});
  REQUIRE(codex.status == 0);
  auto c = nlohmann::json::parse(codex.output.substr(codex.output.find('{')));
  CHECK(c["traces"][0]["files"] == 2);
  CHECK(c["traces"][0]["files_skipped"].value("not a trace", 0) + c["traces"][0]["files_skipped"].value("no requests", 0) == 2);
}

TEST_CASE("replay's memory follows a long conversation's size, not the sum of its turns") {
  // 700 turns of ~2 KB each (a 1.5 MB Cline history): every turn's request
  // carries everything before it, ~0.4 GB of bodies in all. Replay used to
  // keep every body (it aborted under 2 GB on a real 5,000-turn history); it
  // now keeps each message once and builds a turn's body when it replays it.
  const auto file = temp_path("cline-700.json");
  nlohmann::json history = nlohmann::json::array(
      {{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "<task>fix the build</task>"}}}}}});
  std::string filler;
  for (int i = 0; i < 180; ++i) filler += "line ok ";
  for (int i = 0; i < 700; ++i) {
    history.push_back({{"role", "assistant"}, {"content", {{{"type", "text"}, {"text", "<read_file><path>f" + std::to_string(i) + ".c</path></read_file>"}}}}});
    history.push_back({{"role", "user"}, {"content", {{{"type", "text"}, {"text", "[read_file] Result: " + std::to_string(i) + " " + filler}}}}});
  }
  history.push_back({{"role", "assistant"}, {"content", "done"}});
  std::ofstream(file) << history.dump();
  child_process p({gistproxy_binary(), "replay", "--json", "--tokenizer", "estimate", file.string()});
  const int status = p.wait(std::chrono::seconds(600));
  REQUIRE(status == 0);
  auto j = nlohmann::json::parse(p.output().substr(p.output().find('{')));
  CHECK(j["turns"] == 701);
  CHECK(j["tokens_before"].get<std::uint64_t>() > 90'000'000);  // over 0.35 GB of bodies replayed (characters/4)
  struct rusage usage {};
  REQUIRE(::getrusage(RUSAGE_CHILDREN, &usage) == 0);
  // KiB. 18 MB measured: a tenth of what keeping the bodies needs. The bound
  // holds in the plain build (make test). Under AddressSanitizer the peak is
  // its allocator's, not the program's: size classes it keeps mapped for every
  // length a growing body passed through, shadow and redzones, and how the
  // kernel backs them (241 MB here, over 320 MB on a CI machine, for the same
  // 18 MB program), so a bound there would measure the machine.
#if !defined(__SANITIZE_ADDRESS__) && !defined(GISTPROXY_PRODUCT_SANITIZED)
  CHECK(usage.ru_maxrss < 150 * 1024);
#endif
}

TEST_CASE("a --prices that names a directory is refused naming the flag, never a stream library's message") {
  const auto dir = temp_path("prices-dir");
  std::filesystem::create_directories(dir);
  const auto trace = temp_path("one.json");
  std::ofstream(trace) << R"([{"role":"user","content":[{"type":"text","text":"<task>x</task>"}]},{"role":"assistant","content":"y"}])";
  auto r = run({"replay", "--prices", dir.string(), trace.string()});
  CHECK(r.status != 0);
  CHECK(r.output.find("--prices " + dir.string()) != std::string::npos);
  CHECK(r.output.find("not a regular file") != std::string::npos);
  CHECK(r.output.find("basic_filebuf") == std::string::npos);
}
