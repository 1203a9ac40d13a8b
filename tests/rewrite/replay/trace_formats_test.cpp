// Trace formats parse into the requests they hold: request bodies, message
// lists, agents' trajectories, transcripts and recordings.
#include <catch2/catch.hpp>

#include "tests/rewrite/replay/replay_test_support.hpp"

using namespace gistproxy::rewrite;
using namespace gistproxy::testing::replay;
using J = nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("request bodies: a JSON array and JSONL, the API read from each body's shape") {
  J chat = chat_body({{{"role", "user"}, {"content", "hi"}}});
  J messages = {{"model", "claude"}, {"max_tokens", 10}, {"system", "s"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  J responses = {{"model", "gpt-5"}, {"input", "hi"}};
  auto t = read_trace(J::array({chat, messages, responses}).dump());
  CHECK(t.format == "request-bodies");
  REQUIRE(t.requests.size() == 3);
  CHECK(t.requests[0].api->name() == "chat");
  CHECK(t.requests[1].api->name() == "messages");
  CHECK(t.requests[2].api->name() == "responses");
  auto lines = read_trace(chat.dump() + "\n\n" + responses.dump() + "\n");
  REQUIRE(lines.requests.size() == 2);
  CHECK(lines.requests[0].body() == chat.dump());  // bytes as they were
}

TEST_CASE("a message list is rebuilt into one request per assistant turn") {
  J list = J::array({{{"role", "system"}, {"content", "sys"}}, {{"role", "user"}, {"content", "go"}}});
  for (auto& m : tool_turn("c1", "out 1")) list.push_back(m);
  list.push_back({{"role", "assistant"}, {"content", "done"}, {"agent", "main"}, {"thought", "x"}});
  auto t = read_trace(list.dump());
  CHECK(t.format == "messages");
  CHECK(t.rebuilt);
  REQUIRE(t.requests.size() == 2);
  auto second = J::parse(t.requests[1].body());
  REQUIRE(second["messages"].size() == 4);  // system, user, assistant call, tool result
  CHECK(second["messages"][3]["tool_call_id"] == "c1");
  CHECK_FALSE(second["messages"][2].contains("agent"));  // framework bookkeeping is not sent
}

TEST_CASE("SWE-agent trajectories: tool_call_ids name the call a tool message answers") {
  J traj = {{"history", J::array({{{"role", "system"}, {"content", "sys"}},
                                        {{"role", "user"}, {"content", "fix it"}},
                                        {{"role", "assistant"}, {"content", ""}, {"tool_calls", {{{"id", "call_1"}, {"type", "function"}, {"function", {{"name", "bash"}, {"arguments", "{}"}}}}}}},
                                        {{"role", "tool"}, {"content", "ok"}, {"tool_call_ids", {"call_1"}}, {"message_type", "observation"}},
                                        {{"role", "assistant"}, {"content", "done"}}})},
               {"trajectory", J::array()}};
  auto t = read_trace(traj.dump());
  CHECK(t.format == "swe-agent");
  REQUIRE(t.requests.size() == 2);
  CHECK(J::parse(t.requests[1].body())["messages"][3]["tool_call_id"] == "call_1");
}

TEST_CASE("mini-swe-agent trajectories are whole runs, not one request body") {
  // v2 (marker "mini-swe-agent-1.1") and v1 files from before the marker.
  J messages = J::array({{{"role", "system"}, {"content", "sys"}},
                         {{"role", "user"}, {"content", "fix it"}},
                         {{"role", "assistant"}, {"content", "```bash\nls\n```"}, {"extra", {{"response", {{"id", "r1"}}}}}},
                         {{"role", "user"}, {"content", "<returncode>0</returncode>\n<output>a.py</output>"}},
                         {{"role", "assistant"}, {"content", "```bash\ncat a.py\n```"}, {"extra", J::object()}},
                         {{"role", "user"}, {"content", "<output>print(1)</output>"}},
                         {{"role", "assistant"}, {"content", "done"}}});
  J v2 = {{"info", {{"model_stats", {{"api_calls", 3}}}, {"config", {{"model", {{"model_name", "claude-sonnet-4-5"}}}}},
                    {"mini_version", "2.0.0"}}},
          {"messages", messages},
          {"trajectory_format", "mini-swe-agent-1.1"}};
  auto t = read_trace(v2.dump());
  CHECK(t.format == "mini-swe-agent");
  CHECK(t.rebuilt);
  REQUIRE(t.requests.size() == 3);  // one request per assistant message
  auto last = J::parse(t.requests[2].body());
  CHECK(last["model"] == "claude-sonnet-4-5");
  REQUIRE(last["messages"].size() == 6);
  CHECK_FALSE(last["messages"][2].contains("extra"));  // mini-swe-agent's bookkeeping is not sent

  J v1 = {{"info", {{"exit_status", "Submitted"}, {"model_stats", {{"instance_cost", 0.1}}}}}, {"messages", messages}};
  CHECK(read_trace(v1.dump()).format == "mini-swe-agent");
  CHECK(read_trace(v1.dump()).requests.size() == 3);

  // The pair it was confused with: a chat request body has a model and no run info.
  J body = {{"model", "gpt-4o"}, {"messages", messages}};
  CHECK(read_trace(body.dump()).format == "request-bodies");
  CHECK(read_trace(body.dump()).requests.size() == 1);
  J with_info = {{"model", "gpt-4o"}, {"messages", messages}, {"info", {{"model_stats", J::object()}}}};
  CHECK(read_trace(with_info.dump()).format == "request-bodies");
}

TEST_CASE("tau-bench results: each run's traj is its own conversation") {
  auto run = [](int task, const std::string& output) {
    J traj = J::array({{{"role", "system"}, {"content", "You are an airline agent."}},
                       {{"role", "user"}, {"content", "change flight " + std::to_string(task)}}});
    for (auto& m : tool_turn("call_" + std::to_string(task), output)) traj.push_back(m);
    traj.push_back({{"role", "assistant"}, {"content", "done"}});
    return J{{"task_id", task}, {"reward", 1.0}, {"info", J::object()}, {"traj", traj}, {"trial", 0}};
  };
  J results = J::array({run(1, "reservation A"), run(2, "reservation B"), run(3, "reservation C")});
  auto t = read_trace(results.dump());
  CHECK(t.format == "tau-bench");
  CHECK(t.rebuilt);
  REQUIRE(t.requests.size() == 6);  // two assistant turns per run
  auto second_of_run_2 = J::parse(t.requests[3].body());
  REQUIRE(second_of_run_2["messages"].size() == 4);
  CHECK(second_of_run_2["messages"][1]["content"] == "change flight 2");  // runs do not bleed into each other
  CHECK(second_of_run_2["messages"][3]["content"] == "reservation B");

  // Not confused with a message list or a list of request bodies, nor they with it.
  CHECK(read_trace(results[0]["traj"].dump()).format == "messages");
  J bodies = J::array({{{"model", "m"}, {"messages", results[0]["traj"]}}});
  CHECK(read_trace(bodies.dump()).format == "request-bodies");
}

TEST_CASE("Codex CLI rollouts: a request at each point the model starts answering, with the items so far") {
  auto jsonl = [](const std::vector<J>& lines) {
    std::string out;
    for (const auto& l : lines) out += l.dump() + "\n";
    return out;
  };
  auto item = [](J payload) { return J{{"timestamp", "2026-01-01T00:00:00Z"}, {"type", "response_item"}, {"payload", payload}}; };
  auto user = [](const std::string& text) {
    return J{{"type", "message"}, {"role", "user"}, {"content", J::array({{{"type", "input_text"}, {"text", text}}})}};
  };
  std::vector<J> lines = {
      {{"timestamp", "t"}, {"type", "session_meta"}, {"payload", {{"id", "s1"}, {"cwd", "/w"}, {"instructions", nullptr}}}},
      item(user("<environment_context>/w</environment_context>")),
      item(user("fix the build")),
      {{"timestamp", "t"}, {"type", "event_msg"}, {"payload", {{"type", "user_message"}, {"message", "fix the build"}}}},
      {{"timestamp", "t"}, {"type", "turn_context"}, {"payload", {{"model", "gpt-5-codex"}, {"cwd", "/w"}}}},
      item({{"type", "reasoning"}, {"summary", J::array()}, {"encrypted_content", "xyz"}}),
      item({{"type", "function_call"}, {"name", "shell"}, {"arguments", "{\"command\":[\"make\"]}"}, {"call_id", "call_1"}}),
      item({{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", big_output("make")}}),
      item({{"type", "message"}, {"role", "assistant"}, {"content", J::array({{{"type", "output_text"}, {"text", "fixed"}}})}}),
      item(user("thanks")),
      item({{"type", "message"}, {"role", "assistant"}, {"content", J::array({{{"type", "output_text"}, {"text", "ok"}}})}}),
  };
  auto t = read_trace(jsonl(lines));
  CHECK(t.format == "codex");
  CHECK(t.rebuilt);
  REQUIRE(t.requests.size() == 3);  // before the reasoning, after the tool output, after "thanks"
  CHECK(t.requests[0].api->name() == "responses");
  auto second = J::parse(t.requests[1].body());
  CHECK(second["model"] == "gpt-5-codex");
  CHECK_FALSE(second.contains("instructions"));  // null in session_meta: not recorded
  REQUIRE(second["input"].size() == 5);          // 2 user, reasoning, call, output
  CHECK(second["input"][4]["type"] == "function_call_output");
  CHECK(J::parse(t.requests[2].body())["input"].size() == 7);

  // The tool output is offloaded like any function_call_output.
  replay_env env;
  auto s = env.r.run(t, "t");
  CHECK(s.offloads == 2);  // in the second and third requests
  CHECK(s.by_tool["shell"].offloaded == 1);

  // The direct generation: a session line, then the items themselves.
  std::vector<J> direct = {{{"id", "s2"}, {"timestamp", "t"}, {"instructions", "You are Codex."}},
                           user("hello"),
                           {{"record_type", "state"}},
                           {{"type", "message"}, {"role", "assistant"}, {"content", J::array({{{"type", "output_text"}, {"text", "hi"}}})}}};
  auto d = read_trace(jsonl(direct));
  CHECK(d.format == "codex");
  REQUIRE(d.requests.size() == 1);
  CHECK(J::parse(d.requests[0].body())["instructions"] == "You are Codex.");

  // Not confused with a Claude Code transcript or a JSONL message list.
  std::vector<J> claude = {{{"type", "user"}, {"sessionId", "x"}, {"message", {{"role", "user"}, {"content", "hi"}}}},
                           {{"type", "assistant"}, {"sessionId", "x"}, {"message", {{"role", "assistant"}, {"id", "m1"}, {"content", "yo"}}}}};
  CHECK(read_trace(jsonl(claude)).format == "claude-code");
  std::vector<J> msgs = {{{"role", "user"}, {"content", "hi"}}, {{"role", "assistant"}, {"content", "yo"}}};
  CHECK(read_trace(jsonl(msgs)).format == "messages");
}

TEST_CASE("Cline task histories: Anthropic requests whose text tool results need --text-tool-results cline") {
  auto text = [](const std::string& s) { return J::array({{{"type", "text"}, {"text", s}}}); };
  J history = J::array({{{"role", "user"}, {"content", text("<task>fix the config</task>")}, {"ts", 1}},
                        {{"role", "assistant"}, {"content", text("<read_file><path>a.conf</path></read_file>")}},
                        {{"role", "user"}, {"content", J::array({{{"type", "text"}, {"text", "[read_file for 'a.conf'] Result:"}},
                                                                 {{"type", "text"}, {"text", big_output("conf")}}})}},
                        {{"role", "assistant"}, {"content", text("done")}}});
  auto t = read_trace(history.dump());
  CHECK(t.format == "cline");
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[1].api->name() == "messages");
  CHECK_FALSE(J::parse(t.requests[1].body())["messages"][0].contains("ts"));

  replay_env plain;
  CHECK(plain.r.run(t, "t").offloads == 0);  // the result is user text: invisible without the flag
  memory_blob_store store([] { return std::int64_t(1000); });
  char_ratio_estimator estimator;
  offload_config cfg;
  cfg.text_tool_results = text_results::cline;
  offload_engine engine(cfg, store, estimator, [] { return std::uint64_t(1); });
  auto s = replayer(engine, store, estimator).run(t, "t");
  CHECK(s.offloads == 1);
  CHECK(s.by_tool["read_file"].offloaded == 1);

  // A message list with string contents stays a plain message list.
  CHECK(read_trace(J::array({{{"role", "user"}, {"content", "<task>x</task>"}}, {{"role", "assistant"}, {"content", "y"}}}).dump())
            .format == "messages");
}

TEST_CASE("OpenHands evaluation output: each instance's event history becomes its chat requests") {
  auto response = [](const std::string& id, J message) {
    return J{{"id", id}, {"choices", J::array({{{"index", 0}, {"message", message}}})}};
  };
  auto call = [](const std::string& id, const std::string& cmd) {
    return J{{"id", id}, {"type", "function"}, {"function", {{"name", "execute_bash"}, {"arguments", J{{"command", cmd}}.dump()}}}};
  };
  auto instance = [&](const std::string& name, std::vector<std::pair<std::string, std::string>> calls, const std::string& output) {
    J history = J::array({{{"id", 0}, {"source", "agent"}, {"action", "system"}, {"args", {{"content", "You are OpenHands."}}}},
                          {{"id", 1}, {"source", "user"}, {"action", "message"}, {"args", {{"content", "fix " + name}}}}});
    J tool_calls = J::array();
    for (auto& [id, cmd] : calls) tool_calls.push_back(call(id, cmd));
    auto first = response(name + "-r1", {{"role", "assistant"}, {"content", "running"}, {"tool_calls", tool_calls}});
    for (auto& [id, cmd] : calls)
      history.push_back({{"source", "agent"}, {"action", "run"}, {"args", {{"command", cmd}}},
                         {"tool_call_metadata", {{"function_name", "execute_bash"}, {"tool_call_id", id}, {"model_response", first},
                                                 {"total_calls_in_response", calls.size()}}}});
    for (auto& [id, cmd] : calls)
      history.push_back({{"source", "agent"}, {"observation", "run"}, {"content", output}, {"cause", 2},
                         {"tool_call_metadata", {{"function_name", "execute_bash"}, {"tool_call_id", id}}}});
    history.push_back({{"source", "agent"}, {"observation", "agent_state_changed"}, {"content", ""}});
    history.push_back({{"source", "agent"}, {"action", "finish"}, {"args", {{"final_thought", "ok"}}},
                       {"tool_call_metadata", {{"function_name", "finish"}, {"tool_call_id", "f"},
                                               {"model_response", response(name + "-r2", {{"role", "assistant"}, {"content", "done"}})}}}});
    return J{{"instance_id", name}, {"instruction", "fix " + name}, {"history", history},
             {"metadata", {{"llm_config", {{"model", "gpt-4o"}}}}}, {"test_result", J::object()}};
  };
  std::string jsonl = instance("a", {{"call_1", "make"}}, big_output("make")).dump() + "\n" +
                      instance("b", {{"call_x", "ls"}, {"call_y", "pwd"}}, "short").dump() + "\n";
  auto t = read_trace(jsonl);
  CHECK(t.format == "openhands-output");
  REQUIRE(t.requests.size() == 4);  // two model turns per instance
  auto a2 = J::parse(t.requests[1].body());
  CHECK(a2["model"] == "gpt-4o");
  REQUIRE(a2["messages"].size() == 4);  // system, user, assistant with the call, tool
  CHECK(a2["messages"][3]["tool_call_id"] == "call_1");
  auto b2 = J::parse(t.requests[3].body());
  REQUIRE(b2["messages"].size() == 5);  // one assistant message for two actions of one response, two results
  CHECK(b2["messages"][2]["tool_calls"].size() == 2);
  CHECK(b2["messages"][1]["content"] == "fix b");  // instances do not bleed into each other

  replay_env env;
  auto s = env.r.run(t, "t");
  CHECK(s.by_tool["execute_bash"].offloaded == 1);
  // Not confused with a SWE-agent .traj, which also has a history.
  CHECK(read_trace(J{{"history", J::array({{{"role", "user"}, {"content", "x"}}, {{"role", "assistant"}, {"content", "y"}}})},
                     {"trajectory", J::array()}}.dump()).format == "swe-agent");
}

TEST_CASE("Gemini CLI saved chats: checkpoints and sessions become generateContent requests") {
  const auto big = big_output("file");
  J checkpoint = J::array({{{"role", "user"}, {"parts", J::array({{{"text", "fix a"}}})}},
                           {{"role", "model"}, {"parts", J::array({{{"functionCall", {{"name", "read_file"}, {"args", {{"path", "a"}}}}}}})}},
                           {{"role", "user"}, {"parts", J::array({{{"functionResponse", {{"name", "read_file"}, {"response", {{"output", big}}}}}}})}},
                           {{"role", "model"}, {"parts", J::array({{{"text", "done"}}})}}});
  auto t = read_trace(checkpoint.dump());
  CHECK(t.format == "gemini-cli");
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[1].api->name() == "gemini");
  CHECK(J::parse(t.requests[1].body())["contents"].size() == 3);
  replay_env env;
  CHECK(env.r.run(t, "t").by_tool["read_file"].offloaded == 1);

  J session = {{"sessionId", "s1"}, {"projectHash", "h"}, {"startTime", "t"},
               {"messages", J::array({{{"id", "1"}, {"type", "user"}, {"content", "fix a"}},
                                      {{"id", "2"}, {"type", "gemini"}, {"content", ""}, {"model", "gemini-2.5-pro"},
                                       {"toolCalls", J::array({{{"id", "c1"}, {"name", "read_file"}, {"args", {{"path", "a"}}},
                                                                {"result", J::array({{{"functionResponse", {{"id", "c1"}, {"name", "read_file"},
                                                                                                             {"response", {{"output", big}}}}}}})}}})}},
                                      {{"id", "3"}, {"type", "gemini"}, {"content", "done"}}})}};
  auto st = read_trace(session.dump());
  CHECK(st.format == "gemini-cli");
  REQUIRE(st.requests.size() == 2);
  auto second = J::parse(st.requests[1].body())["contents"];
  REQUIRE(second.size() == 3);  // user, model call, user response
  CHECK(second[1]["parts"][0]["functionCall"]["name"] == "read_file");
  CHECK(second[2]["parts"][0]["functionResponse"]["response"]["output"] == big);
  replay_env env2;
  CHECK(env2.r.run(st, "t").by_tool["read_file"].offloaded == 1);

  // Chat messages (content, no parts) stay a message list.
  CHECK(read_trace(J::array({{{"role", "user"}, {"content", "x"}}, {{"role", "assistant"}, {"content", "y"}}}).dump()).format ==
        "messages");
}

TEST_CASE("Claude Code transcripts: blocks of one assistant message and consecutive user lines are merged") {
  auto line = [](const std::string& type, J message) {
    return J{{"type", type}, {"sessionId", "s"}, {"uuid", "u"}, {"message", message}}.dump() + "\n";
  };
  std::string t_text = J{{"type", "summary"}, {"summary", "x"}}.dump() + "\n";
  t_text += line("user", {{"role", "user"}, {"content", "read the file"}});
  t_text += line("assistant", {{"role", "assistant"}, {"id", "m1"}, {"model", "claude-x"}, {"content", {{{"type", "text"}, {"text", "ok"}}}}});
  t_text += line("assistant", {{"role", "assistant"}, {"id", "m1"}, {"model", "claude-x"}, {"content", {{{"type", "tool_use"}, {"id", "t1"}, {"name", "Read"}, {"input", J::object()}}}}});
  t_text += J{{"type", "progress"}, {"data", 1}}.dump() + "\n";
  t_text += line("user", {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", "file bytes"}}}}});
  t_text += line("user", {{"role", "user"}, {"content", "and then?"}});
  t_text += line("assistant", {{"role", "assistant"}, {"id", "m2"}, {"model", "claude-x"}, {"content", {{{"type", "text"}, {"text", "done"}}}}});
  auto t = read_trace(t_text);
  CHECK(t.format == "claude-code");
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[1].api->name() == "messages");
  auto body = J::parse(t.requests[1].body());
  REQUIRE(body["messages"].size() == 3);
  CHECK(body["messages"][1]["content"].size() == 2);  // text + tool_use of m1
  CHECK(body["messages"][2]["content"].size() == 2);  // tool_result + "and then?"
  CHECK(body["model"] == "claude-x");
}

TEST_CASE("HAR, claude-trace, recordings, OpenHands and Inspect logs keep only LLM requests") {
  J chat = chat_body({{{"role", "user"}, {"content", "hi"}}});
  J har = {{"log", {{"version", "1.2"}, {"entries", {
      {{"request", {{"method", "POST"}, {"url", "https://api.openai.com/v1/chat/completions"}, {"postData", {{"mimeType", "application/json"}, {"text", chat.dump()}}}}}},
      {{"request", {{"method", "GET"}, {"url", "https://example.com/"}}}}}}}}};
  auto h = read_trace(har.dump());
  CHECK(h.format == "har");
  REQUIRE(h.requests.size() == 1);
  CHECK(h.requests[0].body() == chat.dump());

  std::string ct = J{{"request", {{"url", "https://api.anthropic.com/v1/messages?beta=true"}, {"body", {{"model", "m"}, {"messages", J::array()}}}}}, {"response", J::object()}}.dump() + "\n" +
                   J{{"request", {{"url", "https://api.anthropic.com/api/oauth/usage"}, {"body", nullptr}}}, {"response", J::object()}}.dump() + "\n";
  auto c = read_trace(ct);
  CHECK(c.format == "claude-trace");
  REQUIRE(c.requests.size() == 1);
  CHECK(c.requests[0].api->name() == "messages");
  CHECK(c.notes.size() == 1);

  auto rec = read_trace(J{{"gistproxy_record", 1}, {"path", "/v1/chat/completions"}, {"request_body", "{\"a\":1}"}, {"forwarded_body", "{\"a\":2}"}}.dump() + "\n" +
                        J{{"gistproxy_record", 1}, {"path", "/v1/models"}, {"request_body", ""}}.dump());
  CHECK(rec.format == "gistproxy-recording");
  REQUIRE(rec.requests.size() == 1);
  CHECK(rec.requests[0].forwarded == "{\"a\":2}");
  CHECK(rec.requests[0].target == "/v1/chat/completions");
  // A line whose members have the wrong types costs nothing but those members.
  auto odd = read_trace(J{{"gistproxy_record", 1}, {"path", "/model/anthropic.claude-x-v1%3A0/invoke"}, {"request_body", "{}"}, {"hops", "two"}}.dump() + "\n" +
                        J{{"gistproxy_record", 1}, {"path", 7}, {"request_body", "{}"}, {"hops", -3}}.dump());
  REQUIRE(odd.requests.size() == 1);
  CHECK(odd.requests[0].api->name() == "bedrock-messages");
  CHECK(odd.requests[0].page_in_hops == 0);

  J oh = {{"messages", chat["messages"]}, {"kwargs", {{"tools", {{{"type", "function"}, {"function", {{"name", "bash"}}}}}}}}, {"response", {{"model", "claude-3-5"}}}, {"timestamp", 1}};
  auto o = read_trace(oh.dump());
  CHECK(o.format == "openhands");
  CHECK(J::parse(o.requests.at(0).body())["tools"][0]["function"]["name"] == "bash");

  J inspect = {{"eval", J::object()}, {"samples", {{{"attachments", {{"abc", "the long page"}}},
                  {"events", {{{"event", "model"}, {"call", {{"request", chat_body({{{"role", "tool"}, {"tool_call_id", "x"}, {"content", "attachment://abc"}}})}}}}}}}}}};
  auto i = read_trace(inspect.dump());
  CHECK(i.format == "inspect");
  CHECK(J::parse(i.requests.at(0).body())["messages"][0]["content"] == "the long page");
}

TEST_CASE("vcr cassettes: exact body strings and parsed_body mappings with typed scalars") {
  std::string yaml = R"(interactions:
- request:
    body: '{"model":"gpt-4o","messages":[{"role":"user","content":"it''s"}]}'
    method: POST
    uri: https://api.openai.com/v1/chat/completions
- request:
    method: POST
    uri: https://api.anthropic.com/v1/messages
    parsed_body:
      max_tokens: 4096
      stream: false
      temperature: 0.5
      model: claude-sonnet-4-0
      metadata: null
      messages:
      - role: user
        content: '123'
- request:
    body: null
    method: GET
    uri: https://api.smith.langchain.com/runs
version: 1
)";
  auto t = read_trace(yaml);
  CHECK(t.format == "vcr");
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[0].body() == R"({"model":"gpt-4o","messages":[{"role":"user","content":"it's"}]})");
  auto b = J::parse(t.requests[1].body());
  CHECK(b["max_tokens"] == 4096);
  CHECK(b["stream"] == false);
  CHECK(b["temperature"] == 0.5);
  CHECK(b["metadata"].is_null());
  CHECK(b["messages"][0]["content"] == "123");  // quoted: stays a string
  CHECK(t.notes.size() == 1);
}

TEST_CASE("a JSONL line that does not parse is skipped and named, the rest of the trace replays") {
  J body = chat_body({{{"role", "user"}, {"content", "hi"}}});
  std::string text = body.dump() + "\n" + R"({"model":"m","messages":[{"role":"tool","content":"\ud800 lone"}]})" + "\n" +
                     "{\"model\":\"m\",\"messages\":[\n" + body.dump() + "\n";
  auto t = read_trace(text);
  CHECK(t.format == "request-bodies");
  CHECK(t.requests.size() == 2);
  REQUIRE(t.notes.size() == 2);
  CHECK(t.notes[0] == "line 2 is not a JSON object: skipped");
  CHECK(t.notes[1] == "line 3 is not a JSON object: skipped");
}

TEST_CASE("unrecognised input gets a clear error") {
  CHECK_THROWS_WITH(read_trace("hello"), Catch::Contains("unrecognised trace format"));
  CHECK_THROWS_WITH(read_trace("{oops\n[1,\n"), Catch::Contains("no line of it is a JSON object"));
  CHECK_THROWS_WITH(read_trace("   "), Catch::Contains("empty"));
}
