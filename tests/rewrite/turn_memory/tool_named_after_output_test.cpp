// The turn memory against the full path where the field naming an output's
// tool (tool_call_id, tool_use_id, call_id, toolUseId, Gemini's name) comes
// after the output in its object: the output's bytes are shared with the
// previous turn, the field that names its tool is not. The reference must
// name the tool this turn's body names, as the full path does.
#include <catch2/catch.hpp>

#include <string>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/turn_memory/turn_reuse.hpp"

using namespace gistproxy::rewrite;

namespace {

std::string long_output() {
  std::string out;
  for (int i = 0; i < 160; ++i) out += "line " + std::to_string(i) + " of a file the agent read, padded out\\n";
  return out;
}

// One API's body with two declared calls (read_file as c1, grep_code as c2)
// and one output attributed to `id`, the naming field after the output.
std::string body_for(const std::string& api, const std::string& id, const std::string& tail) {
  const auto out = long_output();
  const std::string name = id == "c1" ? "read_file" : "grep_code";
  if (api == "chat")
    return R"({"model":"gpt-4o","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[)"
           R"({"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}},)"
           R"({"id":"c2","type":"function","function":{"name":"grep_code","arguments":"{}"}}]},)"
           R"({"role":"tool","content":")" + out + R"(","tool_call_id":")" + id + R"("},{"role":"user","content":")" + tail +
           R"("}],"tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]})";
  if (api == "messages")
    return R"({"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"go"},)"
           R"({"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"read_file","input":{}},)"
           R"({"type":"tool_use","id":"c2","name":"grep_code","input":{}}]},)"
           R"({"role":"user","content":[{"type":"tool_result","content":")" + out + R"(","tool_use_id":")" + id +
           R"("},{"type":"text","text":")" + tail + R"("}]}],"tools":[{"name":"read_file","input_schema":{"type":"object"}}]})";
  if (api == "responses")
    return R"({"model":"gpt-4o","input":[{"role":"user","content":"go"},)"
           R"({"type":"function_call","call_id":"c1","name":"read_file","arguments":"{}"},)"
           R"({"type":"function_call","call_id":"c2","name":"grep_code","arguments":"{}"},)"
           R"({"type":"function_call_output","output":")" + out + R"(","call_id":")" + id + R"("},)"
           R"({"role":"user","content":")" + tail +
           R"("}],"tools":[{"type":"function","name":"read_file","parameters":{"type":"object"}}]})";
  if (api == "gemini")
    return R"({"contents":[{"role":"user","parts":[{"text":"go"}]},)"
           R"({"role":"model","parts":[{"functionCall":{"name":"read_file","args":{}}},{"functionCall":{"name":"grep_code","args":{}}}]},)"
           R"({"role":"user","parts":[{"functionResponse":{"response":{"result":")" + out + R"("},"name":")" + name +
           R"("}}]},{"role":"user","parts":[{"text":")" + tail +
           R"("}]}],"tools":[{"functionDeclarations":[{"name":"read_file"}]}]})";
  return R"({"messages":[{"role":"user","content":[{"text":"go"}]},)"
         R"({"role":"assistant","content":[{"toolUse":{"toolUseId":"c1","name":"read_file","input":{}}},)"
         R"({"toolUse":{"toolUseId":"c2","name":"grep_code","input":{}}}]},)"
         R"({"role":"user","content":[{"toolResult":{"content":[{"text":")" + out + R"("}],"toolUseId":")" + id +
         R"("}},{"text":")" + tail + R"("}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"read_file","inputSchema":{"json":{"type":"object"}}}}]}})";
}

offload_config low_threshold() {
  offload_config cfg;
  cfg.threshold_tokens = 150;
  return cfg;
}

std::string forwarded_of(const rewrite_result& r, const std::string& body) {
  return r.report.outcome == rewrite_outcome::rewritten ? r.body : body;
}

}  // namespace

TEST_CASE("an output whose tool-naming field follows it and changes is referenced under its new tool, on every API",
          "[turn_memory]") {
  const auto api = GENERATE(as<std::string>{}, "chat", "messages", "responses", "gemini", "bedrock-converse");
  INFO(api);
  const endpoint& d = *endpoint_named(api);
  const auto clock = [] { return std::int64_t(1700000000); };
  memory_blob_store full_store(clock), inc_store(clock);
  char_ratio_estimator estimator;
  offload_engine full_engine(low_threshold(), full_store, estimator), inc_engine(low_threshold(), inc_store, estimator);
  turn_memory memory({std::size_t(16) << 20, 8});

  // Turn 1: the output is read_file's; turn 2 attributes the same bytes to grep_code.
  const auto first = body_for(api, "c1", "next");
  turn_reuse one(memory.find("t", d, first), d, first);
  REQUIRE(one.inspect(first).has_value());
  const auto r1 = one.rewrite(inc_engine, first, "t", std::nullopt, std::nullopt);
  REQUIRE(r1.report.outcome == rewrite_outcome::rewritten);
  REQUIRE(r1.body.find("tool: read_file") != std::string::npos);
  memory.remember("t", "c", one.finish(first, r1.body));

  const auto second = body_for(api, "c2", "and again");
  turn_reuse two(memory.find("t", d, second), d, second);
  // The output's bytes are shared with turn 1: the path under test.
  REQUIRE(two.same_bytes() > second.find(long_output()) + long_output().size());
  two.inspect(second);
  const auto inc = two.rewrite(inc_engine, second, "t", std::nullopt, std::nullopt);
  const auto full = full_engine.rewrite(d.wire(), second, "t");
  CHECK(forwarded_of(full, second).find("tool: grep_code") != std::string::npos);
  CHECK(forwarded_of(inc, second) == forwarded_of(full, second));
}
