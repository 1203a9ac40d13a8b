// Content-aware digests at the top of a reference: a log's levels and problem
// lines with their numbers, a JSON document's shape with its first and last items.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "rewrite/gist/digests.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("log digest: counts per level and the problem lines, numbered, the first and last five") {
  std::string log;
  for (int i = 1; i <= 3000; ++i) {
    std::string line = "2026-11-25T08:00 INFO step " + std::to_string(i) + " ok";
    if (i % 250 == 0) line = "2026-11-25T08:00 WARNING slow step " + std::to_string(i);
    if (i % 500 == 0) line = "2026-11-25T08:00 ERROR step " + std::to_string(i) + " failed: exit 2";
    if (i == 2999) line = "FAILED tests/test_api.py::test_login - AssertionError: 401 != 200";
    log += line + "\n";
  }
  auto d = log_digest(log, 4000);
  CHECK(d.rfind("levels: ERROR 6, WARN 6, INFO 2987\n", 0) == 0);
  CHECK(d.find("problem lines (10 of 7):") == std::string::npos);
  CHECK(d.find("problem lines (7 of 7):\n500: ") != std::string::npos);
  CHECK(d.find("\n2999: FAILED tests/test_api.py::test_login") != std::string::npos);
  CHECK(d == log_digest(log, 4000));  // deterministic
  CHECK(log_digest(log, 120).size() <= 120);

  std::string many;
  for (int i = 1; i <= 40; ++i) many += "ERROR " + std::to_string(i) + "\n";
  auto m = log_digest(many, 4000);
  CHECK(m.find("problem lines (10 of 40):\n1: ERROR 1\n") != std::string::npos);
  CHECK(m.find("5: ERROR 5\n36: ERROR 36\n") != std::string::npos);
  CHECK(m.ends_with("40: ERROR 40\n"));
  // "0 errors" and "errors=0" are not problems; "error:" (compilers) is.
  auto quiet = log_digest("build: 0 errors\nlink ok\nsrc/a.c:3:1: error: expected ';'\n", 4000);
  CHECK(quiet == "problem lines (1 of 1):\n3: src/a.c:3:1: error: expected ';'\n");
}

TEST_CASE("json digest: the shape, the item count, keys and types, first and last items") {
  std::string list = "[";
  for (int i = 0; i < 300; ++i)
    list += std::string(i ? "," : "") + R"({"id":)" + std::to_string(i) + R"(,"name":"user )" + std::to_string(i) +
            R"(","tags":["a"],"active":true,"manager":null})";
  list += "]";
  auto d = json_digest(list, 2000);
  CHECK(d.rfind("shape: array of 300 objects {id: number, name: string, tags: array, active: boolean, manager: null}\n", 0) == 0);
  CHECK(d.find("first: {\"id\":0,") != std::string::npos);
  CHECK(d.find("last: {\"id\":299,") != std::string::npos);
  CHECK(json_digest(R"({"users":[1,2,3],"total":3,"next":null})", 2000) ==
        "shape: object {users: array of 3, total: number, next: null}\n");
  CHECK(json_digest(R"([1,"a"])", 2000).rfind("shape: array of 2 mixed items\n", 0) == 0);
  CHECK(json_digest("[1,2", 2000).empty());  // not JSON: no digest
  CHECK(json_digest(list, 60).size() <= 60);
}

namespace {

// The tool outputs of the Codex session fixture (real files and git output
// of this repository at a pinned commit), by their size.
std::map<std::size_t, std::string> codex_outputs() {
  std::ifstream in(std::string(GISTPROXY_FIXTURES) + "/traces/codex__rollout-2026-11-20T09-00-00-0199a1f2.jsonl");
  std::map<std::size_t, std::string> out;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    const auto& p = j["payload"];
    if (p.is_object() && p.value("type", "") == "function_call_output") out[p["output"].get<std::string>().size()] = p["output"];
  }
  return out;
}

}  // namespace

TEST_CASE("source digest: an outline of a real source file, each definition with its line number in the output") {
  const auto outputs = codex_outputs();
  REQUIRE(outputs.count(10806));  // `cat rewrite/replay/trace_formats.cpp`, after Codex's 3-line header
  const auto& file = outputs.at(10806);
  auto d = source_digest(file, 4000);
  CHECK(d.rfind("outline (", 0) == 0);
  // Line numbers count the whole output (what read_blob's start_line takes).
  auto line_of = [&](const std::string& text) {
    auto at = file.find(text);
    REQUIRE(at != std::string::npos);
    return std::to_string(std::count(file.begin(), file.begin() + std::ptrdiff_t(at), '\n') + 1);
  };
  CHECK(d.find(line_of("recorded_trace read_trace(std::string_view text) {") + ": recorded_trace read_trace(std::string_view text) {\n") != std::string::npos);
  CHECK(d.find(line_of("bool is_mini_swe_agent(const ojson& j) {") + ": bool is_mini_swe_agent(") != std::string::npos);
  CHECK(d.find(": std::string dump(const ojson& j)") != std::string::npos);      // a one-line definition
  CHECK(d.find("recorded_trace from_lines(const std::vector<ojson>& lines);") == std::string::npos);  // a declaration
  CHECK(d.find("using namespace") == std::string::npos);
  CHECK(d == source_digest(file, 4000));  // deterministic
  // A small budget keeps the first definitions and says how many it left out.
  auto small = source_digest(file, 300);
  CHECK(small.size() <= 300);
  CHECK(small.find(" more\n") != std::string::npos);
  // Numbered lines (Claude Code's Read: "    12→code") are read past the number.
  CHECK(source_digest("     1→#include <x>\n     2→int main(int argc, char** argv) {\n     3→  return 0;\n     4→}\n"
                      "     5→class Foo {\n",
                      4000) == "outline (2 definitions, with their line numbers):\n2: int main(int argc, char** argv) {\n5: class Foo {\n");
  CHECK(source_digest("def only():\n    pass\n", 4000).empty());  // one definition: nothing to outline
}

TEST_CASE("search-hit digest: the files and their hit counts, from real grep output") {
  const auto outputs = codex_outputs();
  REQUIRE(outputs.count(879));  // `grep -rn rebuild_chat rewrite`, after Codex's header
  auto d = search_hits_digest(outputs.at(879), 4000);
  CHECK(d == "search hits: 8 in 4 files\n"
             "5  rewrite/replay/trace_formats.cpp\n"
             "1  rewrite/replay/body_traces.cpp\n"
             "1  rewrite/replay/message_traces.cpp\n"
             "1  rewrite/replay/trace_readers.hpp\n");
  // Not search output: a log with timestamps, source code, prose.
  CHECK(search_hits_digest("12:00:01 start\n12:00:02 step\n12:00:03 done\n", 4000).empty());
  CHECK(search_hits_digest(outputs.at(10806), 4000).empty());
  // One file only: its hits are the output itself, nothing to summarise.
  CHECK(search_hits_digest("a.c:1:x\na.c:2:y\na.c:3:z\n", 4000).empty());
  // Many files, a small budget: the busiest first, the rest counted.
  std::string many;
  for (int f = 0; f < 200; ++f)
    for (int h = 0; h <= f % 5; ++h) many += "src/file" + std::to_string(f) + ".py:" + std::to_string(h + 1) + ":hit\n";
  auto m = search_hits_digest(many, 300);
  CHECK(m.size() <= 300);
  CHECK(m.rfind("search hits: 600 in 200 files\n5  src/file4.py\n", 0) == 0);
  CHECK(m.find(" more files\n") != std::string::npos);
}
