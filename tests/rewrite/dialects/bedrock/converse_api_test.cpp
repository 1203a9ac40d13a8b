// Bedrock Converse's adapter on its own: paths and the model they name,
// requests read and rewritten (read_blob inside toolConfig), the next hop's
// body, usage, its stream filter and its stream assembly. What every API must
// do is in ../conformance_test.cpp.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/endpoint.hpp"
#include "rewrite/dialects/bedrock/converse_api.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "rewrite/replay/trace_formats.hpp"
#include "rewrite/sse/event_parser.hpp"
#include "rewrite/stream_filter.hpp"
#include "tests/rewrite/dialects/facts_of.hpp"

using namespace gistproxy::rewrite;
using J = nlohmann::json;
using gistproxy::testing::facts_of;

namespace {

const endpoint& converse() { return *endpoint_named("bedrock-converse"); }

constexpr std::string_view model_path = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse";
const std::string arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0";

std::string event(const std::string& name, const J& j) { return "event: " + name + "\ndata: " + j.dump() + "\n\n"; }

std::string big_output() {
  std::string s;
  for (int i = 0; i < 400; ++i) s += "line " + std::to_string(i) + " of a long tool output\n";
  return s;
}

// A conversation whose last user message holds a toolResult with `content`
// (a JSON list), after `tool_config` (a JSON member, or empty for none).
std::string body_with(const std::string& content, const std::string& tool_config) {
  return R"({"system":[{"text":"You code."},{"cachePoint":{"type":"default"}}],"messages":[)"
         R"({"role":"user","content":[{"text":"read it"}]},)"
         R"({"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"read_file","input":{"path":"a"}}}]},)"
         R"({"role":"user","content":[{"toolResult":{"content":)" + content + R"(,"toolUseId":"t1","status":"success"}}]}])" +
         (tool_config.empty() ? "" : "," + tool_config) + "}";
}

const std::string client_tools =
    R"("toolConfig":{"tools":[{"toolSpec":{"name":"read_file","inputSchema":{"json":{"type":"object"}}}},{"cachePoint":{"type":"default"}}]})";

J answer_with_calls() {
  return J::parse(R"({"output":{"message":{"role":"assistant","content":[
      {"reasoningContent":{"reasoningText":{"text":"think","signature":"c2ln"}}},
      {"text":"Let me look."},{"text":" "},
      {"toolUse":{"toolUseId":"rb_1","name":"read_blob","input":{"handle":"abc"}}},
      {"toolUse":{"toolUseId":"run_1","name":"run","input":{}}}]}},
      "stopReason":"tool_use",
      "usage":{"inputTokens":20,"outputTokens":10,"totalTokens":110,"cacheReadInputTokens":64,"cacheWriteInputTokens":16},
      "metrics":{"latencyMs":100}})");
}

struct engine_env {
  memory_blob_store store{[] { return std::int64_t(1); }};
  char_ratio_estimator estimator;
  offload_engine engine{[] {
                          offload_config cfg;
                          cfg.threshold_tokens = 100;
                          return cfg;
                        }(),
                        store, estimator};
};

}  // namespace

TEST_CASE("bedrock-converse: converse and converse-stream paths name the model, percent-decoded and bounded") {
  CHECK(endpoint_for("POST", std::string(model_path))->name() == "bedrock-converse");
  CHECK(endpoint_for("POST", "/model/m/converse-stream?x=1")->name() == "bedrock-converse");
  CHECK(endpoint_for("POST", "/model/m/invoke")->name() == "bedrock-messages");  // InvokeModel, not Converse
  CHECK(endpoint_for("POST", "/model//converse") == nullptr);

  request_facts facts;
  converse().inspect_target(std::string(model_path), facts);
  CHECK(facts.model == "anthropic.claude-sonnet-4-5-20250929-v1:0");
  CHECK_FALSE(facts.stream);
  // An inference profile's ARN arrives with ':' and '/' encoded.
  converse().inspect_target("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic."
                            "claude-sonnet-4-5-20250929-v1%3A0/converse-stream",
                            facts);
  CHECK(facts.model == arn);
  CHECK(facts.stream);
  // The path a replayed request goes to encodes the id again, and reads back the same.
  CHECK(converse().request_path(arn).find("%3A") != std::string::npos);
  CHECK(converse().request_path(arn).find("%2F") != std::string::npos);
  CHECK(endpoint_for("POST", converse().request_path(arn)) == &converse());
  CHECK(converse_model_of(converse().request_path(arn)) == arn);
  // What is not a model id is no model: bad escapes, control bytes, beyond Bedrock's 2048 bytes.
  for (const std::string& bad : std::vector<std::string>{"/model/a%ZZb/converse", "/model/a%0Ab/converse", "/model/a%2/converse",
                                                        "/model/a%/converse", "/model/" + std::string(2049, 'm') + "/converse",
                                                        "/model/a%C3%A9/converse"})
    CHECK(converse_model_of(bad).empty());
  CHECK(converse_model_of("/model/" + std::string(2048, 'm') + "/converse").size() == 2048);

  CHECK(converse().upstream().name == "bedrock");
  CHECK(converse().upstream().default_url.empty());
  CHECK(converse().credentials().headers == std::vector<std::string_view>{"authorization"});
}

TEST_CASE("bedrock-converse: the facts come from the path and the body, the key from system and first user text") {
  const std::string turn1 = R"({"system":[{"text":"You code."},{"cachePoint":{"type":"default"}}],
      "messages":[{"role":"user","content":[{"text":"Fix it"},{"cachePoint":{"type":"default"}}]}]})";
  const auto turn2 = body_with(R"([{"text":"done"}])", client_tools);
  auto a = facts_of("/model/m/converse-stream", turn1);
  auto b = facts_of("/model/m/converse", R"({"system":[{"text":"You code."}],"messages":[{"role":"user","content":[{"text":"Fix it"}]}]})");
  CHECK(a.model == "m");
  CHECK(a.stream);
  CHECK_FALSE(b.stream);
  CHECK(a.conversation_key == b.conversation_key);
  CHECK(facts_of("/model/m/converse", turn2).conversation_key != a.conversation_key);
  CHECK_FALSE(converse().wire().inspect("[1]"));
}

TEST_CASE("bedrock-converse: each text item of a toolResult is a tool output named by its toolUse, json and images stay inline") {
  request_scan scan;
  const auto body = body_with(R"([{"text":"first"},{"json":{"rows":[1,2]}},{"image":{"format":"png","source":{"bytes":"iVBO"}}},{"text":"second"}])",
                              client_tools);
  REQUIRE(converse().wire().scan(body, scan));
  REQUIRE(scan.outputs.size() == 2);
  CHECK(scan.outputs[0].raw == "first");
  CHECK(scan.outputs[1].raw == "second");
  CHECK(scan.outputs[0].tool_name == "read_file");  // toolResult's content came before its toolUseId
  CHECK(scan.outputs[0].call_id == "t1");
  CHECK(body.substr(scan.outputs[0].value.begin, scan.outputs[0].value.size()) == "\"first\"");
  CHECK(scan.declared_tools == std::vector<std::string>{"read_file"});
  REQUIRE(scan.tools);
  CHECK(scan.tool_ranges.size() == 2);  // the toolSpec and the cachePoint block
  REQUIRE(scan.tools_holder);
  CHECK(body[scan.tools_holder->begin] == '{');
  REQUIRE(scan.conversation);
  CHECK(scan.second_item_begin > scan.conversation->begin);

  request_scan only_json;
  REQUIRE(converse().wire().scan(body_with(R"([{"json":{"text":"not an output"}}])", client_tools), only_json));
  CHECK(only_json.outputs.empty());
  // What Bedrock itself refuses is not rewritten: forwarded as sent.
  for (const char* config : {R"("toolConfig":null)", R"("toolConfig":{"tools":{"a":1}})", R"("toolConfig":[1])"}) {
    request_scan refused;
    CHECK_FALSE(converse().wire().scan(body_with(R"([{"text":"x"}])", config), refused));
  }
}

TEST_CASE("bedrock-converse: read_blob goes into toolConfig.tools, wherever the client's toolConfig stands") {
  const J output = {{"text", big_output()}};
  const std::string content = J::array({output}).dump();
  struct row {
    std::string tool_config, expected;
  };
  const std::string spec = R"({"toolSpec":{"name":"read_blob")";
  for (const auto& [config, expected] : std::vector<row>{
           {client_tools, R"({"type":"default"}},)" + spec},                      // after the client's tools and cachePoint
           {"", R"("toolConfig":{"tools":[)" + spec},                                  // no toolConfig: a new one
           {R"("toolConfig":{})", R"("toolConfig":{"tools":[)" + spec},                 // an empty one
           {R"("toolConfig":{"toolChoice":{"auto":{}}})", R"({"auto":{}},"tools":[)" + spec}}) {  // one without tools
    INFO(config);
    engine_env env;
    const auto body = body_with(content, config);
    auto r = env.engine.rewrite(converse().wire(), body, "t");
    REQUIRE(r.report.outcome == rewrite_outcome::rewritten);
    REQUIRE(r.report.offloads.size() == 1);
    CHECK(r.report.tool_injected);
    CHECK(r.body.find(expected) != std::string::npos);
    const auto j = J::parse(r.body);
    CHECK(j["toolConfig"]["tools"].back()["toolSpec"]["name"] == "read_blob");
    CHECK(j["toolConfig"]["tools"].back()["toolSpec"]["inputSchema"]["json"]["type"] == "object");
    CHECK(j["messages"][2]["content"][0]["toolResult"]["content"][0]["text"].get<std::string>().size() < big_output().size() / 2);
    request_scan again;
    REQUIRE(converse().wire().scan(r.body, again));
    CHECK(again.declared_tools.back() == "read_blob");
    CHECK(env.engine.rewrite(converse().wire(), body, "t").body == r.body);  // byte-stable
  }
}

TEST_CASE("bedrock-converse: moved cachePoint blocks are not part of the cached prefix, changed content is") {
  const auto layout = converse().wire().cache_prefix();
  const std::string turn1 = R"({"toolConfig":{"tools":[{"toolSpec":{"name":"a"}},{"cachePoint":{"type":"default"}}]},
      "system":[{"text":"s"}],"messages":[{"role":"user","content":[{"text":"q"},{"cachePoint":{"type":"default"}}]}]})";
  const std::string turn2 = R"({"toolConfig":{"tools":[{"toolSpec":{"name":"a"}},{"cachePoint":{"type":"default"}}]},
      "system":[{"text":"s"},{"cachePoint":{"type":"default"}}],"messages":[{"role":"user","content":[{"text":"q"}]},
      {"role":"assistant","content":[{"text":"a"}]},{"role":"user","content":[{"text":"more"},{"cachePoint":{"type":"default"}}]}]})";
  auto f1 = fingerprint_prefix(turn1, layout), f2 = fingerprint_prefix(turn2, layout);
  REQUIRE(f1);
  REQUIRE(f2);
  CHECK(extends(summary_of(*f1), *f2));
  CHECK(keeps_prefix(turn1, turn2, layout));
  std::string edited = turn2;
  edited.replace(edited.find(R"("text":"q")"), 10, R"("text":"Q")");
  CHECK_FALSE(extends(summary_of(*f1), *fingerprint_prefix(edited, layout)));
  // An empty object is content, not a marker.
  CHECK_FALSE(extends(summary_of(*f1), *fingerprint_prefix(R"({"toolConfig":{"tools":[{"toolSpec":{"name":"a"}},{}]},
      "system":[{"text":"s"}],"messages":[{"role":"user","content":[{"text":"q"}]}]})", layout)));
}

TEST_CASE("bedrock-converse: read_blob calls are toolUse blocks, removed from a final answer with stopReason end_turn") {
  auto answer = answer_with_calls();
  auto calls = converse().wire().find_blob_calls(answer, "read_blob");
  REQUIRE(calls.blob_calls.size() == 1);
  CHECK(calls.client_calls == 1);
  CHECK(calls.blob_calls[0].id == "rb_1");
  CHECK(J::parse(calls.blob_calls[0].arguments) == J({{"handle", "abc"}}));

  converse().wire().remove_blob_calls(answer, "read_blob");
  CHECK(answer["output"]["message"]["content"].size() == 4);
  CHECK(answer["stopReason"] == "tool_use");  // the client's own call is still there
  auto only_ours = J::parse(R"({"output":{"message":{"content":[{"text":"x"},
      {"toolUse":{"toolUseId":"rb_1","name":"read_blob","input":{}}}]}},"stopReason":"tool_use"})");
  converse().wire().remove_blob_calls(only_ours, "read_blob");
  CHECK(only_ours["output"]["message"]["content"] == J::parse(R"([{"text":"x"}])"));
  CHECK(only_ours["stopReason"] == "end_turn");
}

TEST_CASE("bedrock-converse: the next hop appends the model's turn and a user turn of toolResults, the tools untouched") {
  const auto body = body_with(R"([{"text":"x"}])", client_tools);
  const auto answer = answer_with_calls();
  auto next = converse().wire().continue_conversation(body, answer, "read_blob", {{"rb_1", "PAGE", false}}, false);
  REQUIRE(next);
  CHECK(next->starts_with(body.substr(0, body.rfind("]],") + 1)));  // every byte before stays
  auto j = J::parse(*next);
  REQUIRE(j["messages"].size() == 5);
  const auto& model = j["messages"][3];
  CHECK(model["role"] == "assistant");
  // Reasoning (with its signature) and text kept, the blank text and the client's call dropped.
  CHECK(model["content"] == J::parse(R"([{"reasoningContent":{"reasoningText":{"text":"think","signature":"c2ln"}}},
      {"text":"Let me look."},{"toolUse":{"toolUseId":"rb_1","name":"read_blob","input":{"handle":"abc"}}}])"));
  CHECK(j["messages"][4] == J::parse(R"({"role":"user","content":[{"toolResult":{"toolUseId":"rb_1",
      "content":[{"text":"PAGE"}],"status":"success"}}]})"));
  CHECK(next->find(client_tools) != std::string::npos);

  auto last = converse().wire().continue_conversation(body, answer, "read_blob", {{"rb_1", "", true}}, true);
  REQUIRE(last);
  auto l = J::parse(*last);
  const auto& user = l["messages"][4]["content"];
  REQUIRE(user.size() == 2);
  CHECK(user[0]["toolResult"]["status"] == "error");
  CHECK(user[0]["toolResult"]["content"][0]["text"] == "error");  // Bedrock refuses an error without content
  CHECK(user[1] == J({{"text", converse_last_hop_notice("read_blob")}}));
  CHECK(last->find(client_tools) != std::string::npos);  // no tool choice can forbid tools: toolConfig stays byte for byte
  CHECK_FALSE(converse().wire().continue_conversation(R"({"messages":{}})", answer, "read_blob", {}, false));
}

TEST_CASE("bedrock-converse: usage counts cache reads and writes as input, from an answer and from the metadata event") {
  const auto answer = answer_with_calls();
  for (const auto& u : {converse().wire().usage_from_response(answer), converse().wire().usage_from_response(std::string_view(answer.dump()))}) {
    CHECK(u.input_tokens == 100);
    CHECK(u.cache_read_tokens == 64);
    CHECK(u.cache_write_tokens == 16);
    CHECK(u.output_tokens == 10);
    CHECK(u.uncached_input_tokens() == 20);
  }
  token_usage u;
  converse().wire().usage_from_event("messageStop", R"({"stopReason":"end_turn"})", u);
  CHECK_FALSE(u.known());
  converse().wire().usage_from_event("metadata", R"({"usage":{"inputTokens":7,"outputTokens":3,"totalTokens":10},"metrics":{"latencyMs":5}})", u);
  CHECK(u.input_tokens == 7);
  CHECK(u.cache_read_tokens == 0);
  CHECK(u.output_tokens == 3);
}

TEST_CASE("bedrock-converse: the stream filter splices two hops, read_blob withheld, blocks renumbered, usage summed at the end") {
  auto f = converse().wire().make_stream_filter("read_blob");
  sse::event_parser parser;
  std::string out;
  auto feed = [&](const std::string& s) { parser.feed(s, [&](const sse::event& e) { out += f->on_event(e); }); };
  const J usage = {{"inputTokens", 20}, {"outputTokens", 10}, {"totalTokens", 110}, {"cacheReadInputTokens", 64}, {"cacheWriteInputTokens", 16}};
  feed(event("messageStart", {{"role", "assistant"}, {"p", "abc"}}));
  feed(event("contentBlockDelta", {{"contentBlockIndex", 0}, {"delta", {{"text", "Looking"}}}, {"p", "ab"}}));
  feed(event("contentBlockStop", {{"contentBlockIndex", 0}}));
  feed(event("contentBlockStart", {{"contentBlockIndex", 1}, {"start", {{"toolUse", {{"toolUseId", "rb_1"}, {"name", "read_blob"}}}}}}));
  feed(event("contentBlockDelta", {{"contentBlockIndex", 1}, {"delta", {{"toolUse", {{"input", "{\"han"}}}}}}));
  feed(event("contentBlockDelta", {{"contentBlockIndex", 1}, {"delta", {{"toolUse", {{"input", "dle\":\"h\"}"}}}}}}));
  feed(event("contentBlockStop", {{"contentBlockIndex", 1}}));
  feed(event("messageStop", {{"stopReason", "tool_use"}}));
  feed(event("metadata", {{"usage", usage}, {"metrics", {{"latencyMs", 100}}}}));
  auto hop = f->end_hop();
  CHECK(hop.complete);
  REQUIRE(hop.calls.size() == 1);
  CHECK(hop.calls[0].id == "rb_1");
  CHECK(hop.calls[0].arguments == "{\"handle\":\"h\"}");
  CHECK(converse().wire().find_blob_calls(hop.response, "read_blob").blob_calls.size() == 1);
  CHECK(hop.response["output"]["message"]["content"][0] == J({{"text", "Looking"}}));
  CHECK(out.find("read_blob") == std::string::npos);
  CHECK(out.find("messageStop") == std::string::npos);
  CHECK(out.find("metadata") == std::string::npos);
  CHECK(out.find("event: messageStart") != std::string::npos);
  CHECK(out.find(R"("p":"ab")") != std::string::npos);  // padding kept as it came
  out.clear();

  // Second hop: its messageStart is dropped, its text block becomes the client's block 1.
  feed(event("messageStart", {{"role", "assistant"}}));
  feed(event("contentBlockDelta", {{"contentBlockIndex", 0}, {"delta", {{"text", "found it"}}}}));
  feed(event("contentBlockStop", {{"contentBlockIndex", 0}}));
  feed(event("messageStop", {{"stopReason", "end_turn"}}));
  feed(event("metadata", {{"usage", usage}, {"metrics", {{"latencyMs", 50}}}}));
  CHECK(out.find("messageStart") == std::string::npos);
  CHECK(out.find(R"("contentBlockIndex":1)") != std::string::npos);
  auto hop2 = f->end_hop();
  CHECK(hop2.complete);
  CHECK(hop2.calls.empty());
  const auto end = f->finish();
  CHECK(end.find("event: messageStop\ndata: {\"stopReason\":\"end_turn\"}\n\n") == 0);
  const auto meta = J::parse(end.substr(end.find("event: metadata\ndata: ") + 22));
  CHECK(meta["usage"]["inputTokens"] == 40);
  CHECK(meta["usage"]["outputTokens"] == 20);
  CHECK(meta["usage"]["totalTokens"] == 220);
  CHECK(meta["usage"]["cacheReadInputTokens"] == 128);
  CHECK(meta["metrics"]["latencyMs"] == 150);
  CHECK(f->usage().input_tokens == 200);
  CHECK(f->usage().output_tokens == 20);
  CHECK(f->keepalive().empty());  // event-stream has no keep-alive message
  CHECK(f->error_event("api_error", "gistproxy: boom") ==
        "event: internalServerException\ndata: {\"message\":\"gistproxy: boom\"}\n\n");
}

TEST_CASE("bedrock-converse: the client's own toolUse blocks are held to the end of the turn, once, numbered after the text") {
  auto f = converse().wire().make_stream_filter("read_blob");
  sse::event_parser parser;
  std::string out;
  auto feed = [&](const std::string& s) { parser.feed(s, [&](const sse::event& e) { out += f->on_event(e); }); };
  feed(event("messageStart", {{"role", "assistant"}}));
  feed(event("contentBlockStart", {{"contentBlockIndex", 0}, {"start", {{"toolUse", {{"toolUseId", "run_1"}, {"name", "run"}}}}}}));
  feed(event("contentBlockDelta", {{"contentBlockIndex", 0}, {"delta", {{"toolUse", {{"input", "{}"}}}}}}));
  feed(event("contentBlockStop", {{"contentBlockIndex", 0}}));
  feed(event("contentBlockDelta", {{"contentBlockIndex", 1}, {"delta", {{"text", "running"}}}}));
  feed(event("messageStop", {{"stopReason", "tool_use"}}));
  CHECK(out.find("run_1") == std::string::npos);
  CHECK(out.find(R"("contentBlockIndex":0)") != std::string::npos);  // the text, first on the client's side
  CHECK(f->end_hop().calls.empty());
  const auto end = f->finish();
  CHECK(end.find("run_1") < end.find("messageStop"));
  CHECK(end.find(R"("contentBlockIndex":1)") != std::string::npos);
  CHECK(end.find("\"tool_use\"") != std::string::npos);  // a turn that calls the client's tool ends as one
  CHECK(end.find("metadata") == std::string::npos);     // none came: none invented
}

TEST_CASE("bedrock-converse: a stream assembles into the answer Converse returns, an exception into its error") {
  const std::string s =
      event("messageStart", {{"role", "assistant"}}) +
      event("contentBlockDelta", {{"contentBlockIndex", 0}, {"delta", {{"reasoningContent", {{"text", "hm"}}}}}}) +
      event("contentBlockDelta", {{"contentBlockIndex", 0}, {"delta", {{"reasoningContent", {{"signature", "c2ln"}}}}}}) +
      event("contentBlockStop", {{"contentBlockIndex", 0}}) +
      event("contentBlockDelta", {{"contentBlockIndex", 1}, {"delta", {{"text", "Hi "}}}}) +
      event("contentBlockDelta", {{"contentBlockIndex", 1}, {"delta", {{"text", "there"}}}}) +
      event("contentBlockStop", {{"contentBlockIndex", 1}}) +
      event("contentBlockStart", {{"contentBlockIndex", 2}, {"start", {{"toolUse", {{"toolUseId", "tu_1"}, {"name", "run"}}}}}}) +
      event("contentBlockDelta", {{"contentBlockIndex", 2}, {"delta", {{"toolUse", {{"input", "{\"cmd\":"}}}}}}) +
      event("contentBlockDelta", {{"contentBlockIndex", 2}, {"delta", {{"toolUse", {{"input", "\"ls\"}"}}}}}}) +
      event("contentBlockStop", {{"contentBlockIndex", 2}}) +
      event("messageStop", {{"stopReason", "tool_use"}}) +
      event("metadata", {{"usage", {{"inputTokens", 5}, {"outputTokens", 42}, {"totalTokens", 47}}}, {"metrics", {{"latencyMs", 9}}}});
  auto r = converse().wire().assemble_stream(s);
  REQUIRE(r);
  const auto& content = (*r)["output"]["message"]["content"];
  CHECK((*r)["output"]["message"]["role"] == "assistant");
  CHECK(content[0] == J::parse(R"({"reasoningContent":{"reasoningText":{"text":"hm","signature":"c2ln"}}})"));
  CHECK(content[1] == J({{"text", "Hi there"}}));
  CHECK(content[2]["toolUse"] == J::parse(R"({"toolUseId":"tu_1","name":"run","input":{"cmd":"ls"}})"));
  CHECK((*r)["stopReason"] == "tool_use");
  CHECK((*r)["usage"]["outputTokens"] == 42);
  CHECK((*r)["metrics"]["latencyMs"] == 9);
  CHECK(converse().wire().usage_from_response(*r).input_tokens == 5);

  auto error = converse().wire().assemble_stream(s.substr(0, s.find("event: contentBlockStop")) +
                                          event("throttlingException", {{"message", "slow down"}}));
  REQUIRE(error);
  CHECK((*error)["__type"] == "throttlingException");
  CHECK((*error)["message"] == "slow down");
  CHECK_FALSE(converse().wire().assemble_stream(event("ping", {{"x", 1}})));
  CHECK_NOTHROW(converse().wire().assemble_stream(event("contentBlockDelta", {{"contentBlockIndex", 1e300}, {"delta", 5}})));
}

TEST_CASE("bedrock-converse: a bare request body is read as Converse's, a Gemini body with a toolConfig is not") {
  const auto t = read_trace(J::array({J::parse(body_with(R"([{"text":"x"}])", client_tools))}).dump());
  REQUIRE(t.requests.size() == 1);
  CHECK(t.requests[0].api == &converse());
  const auto plain = J::parse(R"({"system":[{"text":"s"}],"messages":[{"role":"user","content":[{"text":"q"}]}]})");
  CHECK(converse().request_affinity(plain) > endpoint_named("messages")->request_affinity(plain));
  const auto gemini = J::parse(R"({"contents":[{"role":"user","parts":[{"text":"q"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}})");
  CHECK(converse().request_affinity(gemini) == 0);
  const auto anthropic = J::parse(R"({"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]})");
  CHECK(converse().request_affinity(anthropic) == 0);
}
