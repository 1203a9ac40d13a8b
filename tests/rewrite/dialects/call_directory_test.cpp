// The call directory names the tool behind a call id the way a full walk of
// the conversation would: the latest declaration of an id wins, whether the
// lookup is answered from the newest declarations or from the index built
// when a lookup reaches past them.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>

#include "rewrite/dialects/tool_scan.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("call directory: the latest declaration of an id wins, near or far, owned or remembered") {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    call_directory calls;
    std::map<std::string, std::string> truth;  // what a map filled in order answers
    std::vector<std::pair<std::string, std::string>> remembered;  // outlives the directory's views
    remembered.reserve(1000);
    const int ids = 1 + int(rng() % 300);
    const int steps = int(rng() % 1000);
    for (int s = 0; s < steps; ++s) {
      const auto id = "call_" + std::to_string(rng() % ids) + std::string(rng() % 3 ? 24 : 1, 'x');
      if (rng() % 4 == 0) {  // a lookup, at any depth
        const auto it = truth.find(id);
        CHECK(calls.tool_of(id) == (it == truth.end() ? std::string() : it->second));
        continue;
      }
      const auto tool = "tool_" + std::to_string(s);
      truth[id] = tool;
      if (rng() % 2) {
        calls.declare(id, tool);
      } else {
        const auto& kept = remembered.emplace_back(id, tool);
        calls.declare_remembered(kept.first, kept.second);
      }
    }
    for (int i = 0; i < ids; ++i)
      for (const char* tail : {"x", "xxxxxxxxxxxxxxxxxxxxxxxx"}) {
        const auto id = "call_" + std::to_string(i) + tail;
        const auto it = truth.find(id);
        CHECK(calls.tool_of(id) == (it == truth.end() ? std::string() : it->second));
      }
  }
}
