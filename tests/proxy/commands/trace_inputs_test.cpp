// How much one replay argument may read (proxy/commands/trace_inputs.hpp):
// a directory's files are read until the walk's byte budget is spent, and
// the rest are counted as skipped, never read.
#include "proxy/commands/trace_inputs.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace gistproxy::proxy;

namespace {

std::string rollout(const std::string& text) {
  auto item = [](const std::string& payload) {
    return R"({"timestamp":"t","type":"response_item","payload":)" + payload + "}\n";
  };
  return item(R"({"type":"message","role":"user","content":[{"type":"input_text","text":")" + text + R"("}]})") +
         item(R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]})");
}

}  // namespace

TEST_CASE("a directory's walk stops reading at its byte budget and counts the files past it as skipped") {
  std::string dir = (std::filesystem::temp_directory_path() / "gistproxy-walk-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()));
  for (const auto* name : {"a.jsonl", "b.jsonl", "c.jsonl"}) std::ofstream(std::filesystem::path(dir) / name) << rollout(name);
  const auto one_file = rollout("a.jsonl").size();
  std::size_t traces = 0;
  const auto w = walk_trace(dir, "", [&](const auto&) { ++traces; }, {}, walk_limits{1ull << 30, one_file + 1});
  CHECK(traces == 2);  // a, then b (the budget was not spent when it began): then the budget is spent
  CHECK(w.files == 2);
  REQUIRE(w.skipped.count("over the walk's byte budget"));
  CHECK(w.skipped.at("over the walk's byte budget").count == 1);
  CHECK(w.skipped.at("over the walk's byte budget").example.starts_with("c.jsonl: "));
  std::filesystem::remove_all(dir);
}
