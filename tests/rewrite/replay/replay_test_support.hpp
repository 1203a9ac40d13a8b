// What the replay tests share: a file's bytes, Chat bodies with tool calls
// and long outputs, and a replayer over an in-memory store.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/replay/replay_run.hpp"

namespace gistproxy::testing::replay {

using namespace gistproxy::rewrite;
using J = nlohmann::json;
namespace fs = std::filesystem;


inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string big_output(const std::string& salt) {
  std::string s;
  for (int i = 0; s.size() < 40000; ++i) s += salt + " line " + std::to_string(i) + " of a long tool output\n";
  return s;
}

inline J chat_body(const J& messages) { return {{"model", "gpt-4o"}, {"messages", messages}}; }

inline J tool_turn(const std::string& id, const std::string& output) {
  return J::array({{{"role", "assistant"}, {"content", nullptr},
                       {"tool_calls", {{{"id", id}, {"type", "function"}, {"function", {{"name", "cat"}, {"arguments", "{}"}}}}}}},
                      {{"role", "tool"}, {"tool_call_id", id}, {"content", output}}});
}

struct replay_env {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  char_ratio_estimator estimator;
  offload_engine engine{offload_config{}, store, estimator, [] { return std::uint64_t(1); }};
  replayer r{engine, store, estimator};
};


}  // namespace gistproxy::testing::replay
