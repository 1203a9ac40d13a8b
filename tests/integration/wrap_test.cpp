// `gistproxy wrap`: an agent (here a small script standing in for one, named
// with --base-url-env after --) runs behind a private proxy that offloads and
// pages in, with its pre-set base URL chained as the upstream; wrap returns
// its exit status, prints totals equal to /metrics, and leaves nothing
// running. The real agent CLIs are not driven here (see the issue's note).
#include <catch2/catch.hpp>
#include <signal.h>

#include <fstream>
#include <regex>

#include "tests/integration/harness.hpp"
#include "tests/integration/wrap_support.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;

namespace {

// The stand-in agent: one chat turn whose model pages a needle back, a
// credential of its own, then /metrics through the admin URL wrap exports.
// "wait": first writes its pid and blocks on a streamed answer that never
// comes; Ctrl-C ends it. "resume": the same, but Ctrl-C only interrupts that
// turn (as Claude Code's does) and the agent goes on with the next one.
constexpr const char* agent_script = R"(
import json, os, sys, time, urllib.request
base, out, mode = os.environ["MY_BASE_URL"], sys.argv[1], sys.argv[2]
open(out + ".base", "w").write(base)
hay = "".join(f"config line {i}: key_{i}=value_{i*31%977}\n" + ("config line 2500: NEEDLE secret_port=48213\n" if i == 2500 else "") for i in range(5000))
def turn(ask, stream):
    body = {"model": "gpt-4o", "stream": stream, "messages": [{"role": "user", "content": ask},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": hay}],
            "tools": [{"type": "function", "function": {"name": "cat"}}]}
    req = urllib.request.Request(base + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", "authorization": "Bearer sk-chained-secret-4242"})
    return urllib.request.urlopen(req).read().decode()
if mode in ("wait", "resume"):
    open(out + ".pid", "w").write(str(os.getpid()))
    try:
        turn("hang second hop", True)
    except KeyboardInterrupt:
        if mode == "wait":
            raise
answer = turn("find the needle", False)
open(out + ".answer", "w").write(answer)
open(out + ".metrics", "w").write(urllib.request.urlopen(os.environ["GISTPROXY_ADMIN_URL"] + "/metrics").read().decode())
sys.exit(int(sys.argv[3]))
)";

// The sum of a metric family's series.
double family_sum(const std::string& metrics, const std::string& family) {
  double total = 0;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(family + "{", 0) == 0 || line.rfind(family + " ", 0) == 0) total += std::stod(line.substr(line.rfind(' ') + 1));
  return total;
}

struct wrap_run {
  std::filesystem::path out, cache;
  std::unique_ptr<child_process> wrap;
};

// `session`: wrap leads a session of its own (setsid), as a shell's job leads
// its process group: the group a terminal's Ctrl-C goes to.
wrap_run start_wrap(const mock_upstream& upstream, const std::string& mode, int exit_code, bool session = false) {
  wrap_run r;
  r.out = temp_path("wrap-agent");
  r.cache = temp_path("wrap-cache");
  const auto script = temp_path("agent.py");
  std::ofstream(script) << agent_script;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "XDG_CACHE_HOME=", 15) != 0) env.emplace_back(*e);
  env.push_back("MY_BASE_URL=" + upstream.url());  // pre-set: wrap must chain it
  env.push_back("XDG_CACHE_HOME=" + r.cache.string());
  std::vector<std::string> argv{gistproxy_binary(), "wrap", "--drain-timeout", "2s", "--base-url-env", "MY_BASE_URL", "--",
                                "python3", script.string(), r.out.string(), mode, std::to_string(exit_code)};
  if (session) argv.insert(argv.begin(), "setsid");  // not a group leader yet: setsid execs in place, same pid
  r.wrap = std::make_unique<child_process>(argv, env);
  return r;
}

}  // namespace

TEST_CASE("wrap runs a command behind a private proxy and says what it saved, as /metrics does", "[wrap]") {
  mock_upstream upstream;
  auto run = start_wrap(upstream, "once", 7);
  REQUIRE(run.wrap->wait(std::chrono::seconds(60)) == 7);  // the agent's own status
  const auto said = run.wrap->output();
  INFO(said);
  const auto base = slurp(run.out.string() + ".base");
  CHECK(base.rfind("http://127.0.0.1:", 0) == 0);
  CHECK(base != upstream.url());  // pointed at the proxy, which chained the pre-set URL
  CHECK(slurp(run.out.string() + ".answer").find("NEEDLE secret_port=48213") != std::string::npos);
  const auto bodies = upstream.llm_bodies();
  REQUIRE(bodies.size() == 2);  // the turn and its page-in hop, both through the proxy
  CHECK(bodies[0].find("read_blob") != std::string::npos);
  // The totals printed are /metrics' totals.
  const auto metrics = slurp(run.out.string() + ".metrics");
  std::smatch m;
  REQUIRE(std::regex_search(said, m, std::regex(R"((\d+) requests; .* (\d+) page-ins, (\d+) churn)")));
  CHECK(std::stod(m[1]) == family_sum(metrics, "gistproxy_requests_total"));
  CHECK(std::stod(m[2]) == family_sum(metrics, "gistproxy_page_ins_total"));
  CHECK(std::stod(m[2]) == 1);
  // Nothing left running, and the chained credential in no log.
  CHECK(refuses(base));
  for (const auto& f : std::filesystem::recursive_directory_iterator(run.cache))
    if (f.is_regular_file() && f.path().extension() == ".log") CHECK(slurp(f.path()).find("sk-chained") == std::string::npos);
  CHECK(said.find("sk-chained") == std::string::npos);
}

TEST_CASE("Ctrl-C during a streamed answer ends the agent and the proxy and leaves no temp file", "[wrap]") {
  mock_upstream upstream;
  auto run = start_wrap(upstream, "wait", 0, true);
  const auto pid_file = run.out.string() + ".pid";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (slurp(pid_file).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(!slurp(pid_file).empty());
  // The terminal's Ctrl-C goes to the foreground group: wrap and its agent,
  // not the proxy (a group of its own), which wrap stops after the agent.
  REQUIRE(::getpgid(run.wrap->pid()) == run.wrap->pid());
  ::kill(-run.wrap->pid(), SIGINT);
  const int status = run.wrap->wait(std::chrono::seconds(20));
  INFO(run.wrap->output());  // for every check below (one failed once in a loaded local run, unexplained)
  CHECK(status == 128 + SIGINT);
  CHECK(run.wrap->output().find(" requests; input tokens") != std::string::npos);  // the proxy outlived the Ctrl-C
  CHECK(refuses(slurp(run.out.string() + ".base")));
  for (const auto& f : std::filesystem::recursive_directory_iterator(run.cache))
    CHECK(f.path().filename().string().find(".tmp.") == std::string::npos);
}

// The proxy is in a process group of its own: were it in the terminal's, the
// Ctrl-C that only interrupts the agent's turn would drain it under the agent.
TEST_CASE("Ctrl-C reaches the agent and not the proxy: an agent that goes on is still served", "[wrap]") {
  mock_upstream upstream;
  auto run = start_wrap(upstream, "resume", 0, true);
  const auto pid_file = run.out.string() + ".pid";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (slurp(pid_file).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(!slurp(pid_file).empty());
  ::kill(-run.wrap->pid(), SIGINT);
  CHECK(run.wrap->wait(std::chrono::seconds(60)) == 0);
  INFO(run.wrap->output());
  CHECK(slurp(run.out.string() + ".answer").find("NEEDLE secret_port=48213") != std::string::npos);
}

TEST_CASE("two wraps at once each get a proxy of their own", "[wrap]") {
  mock_upstream upstream;
  auto a = start_wrap(upstream, "once", 0), b = start_wrap(upstream, "once", 0);
  REQUIRE(a.wrap->wait(std::chrono::seconds(60)) == 0);
  REQUIRE(b.wrap->wait(std::chrono::seconds(60)) == 0);
  CHECK(slurp(a.out.string() + ".base") != slurp(b.out.string() + ".base"));
}

TEST_CASE("wrap --print-env says each agent's settings without running anything", "[wrap]") {
  auto claude = run_command({gistproxy_binary(), "wrap", "--print-env", "claude"});
  CHECK(claude.exit_code == 0);
  CHECK(claude.output.find("export ANTHROPIC_BASE_URL='http://127.0.0.1:8080'") != std::string::npos);
  CHECK(claude.output.find("export BASH_MAX_OUTPUT_LENGTH='150000'") != std::string::npos);
  auto kept = run_command({gistproxy_binary(), "wrap", "--print-env", "--keep-agent-limits", "claude"});
  CHECK(kept.output.find("BASH_MAX_OUTPUT_LENGTH") == std::string::npos);
  auto codex = run_command({gistproxy_binary(), "wrap", "--print-env", "--base-url", "http://127.0.0.1:9", "codex"});
  CHECK(codex.output.find("model_providers.gistproxy.base_url=\"http://127.0.0.1:9/v1\"") != std::string::npos);
  CHECK(run_command({gistproxy_binary(), "wrap", "--print-env", "nosuchagent"}).exit_code == 2);
  // Cline's base URL is in its own settings: said, not written; its session kept in-process.
  auto cline = run_command({gistproxy_binary(), "wrap", "--print-env", "cline"});
  CHECK(cline.exit_code == 0);
  CHECK(cline.output.find("export CLINE_SESSION_BACKEND_MODE='local'") != std::string::npos);
  CHECK(cline.output.find("export CLINE_MESSAGE_BUILDER_MAX_TOOL_RESULT_CHARS='150000'") != std::string::npos);
  CHECK(cline.output.find("cline auth -p openai-compatible -b http://127.0.0.1:8080/v1") != std::string::npos);
}

// `wrap claude` itself (a stand-in named claude first on PATH): the
// ANTHROPIC_BASE_URL it was pre-pointed at becomes the proxy's Anthropic
// upstream, the agent's key reaches that upstream, and neither the proxy's
// log, the recording nor wrap's own output holds it.
TEST_CASE("wrap claude chains a pre-set ANTHROPIC_BASE_URL and never logs its credential", "[wrap]") {
  mock_upstream upstream;
  const auto bin = temp_path("wrap-bin"), out = temp_path("wrap-claude"), cache = temp_path("wrap-cache");
  const auto record = temp_path("wrap-record.jsonl");
  write_stand_in(bin, "claude", R"(#!/usr/bin/env python3
import json, os, sys, urllib.request
base = os.environ["ANTHROPIC_BASE_URL"]
open(sys.argv[1] + ".base", "w").write(base)
hay = "".join(f"config line {i}: key_{i}=value_{i*31%977}\n" + ("config line 2500: NEEDLE secret_port=48213\n" if i == 2500 else "") for i in range(5000))
body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": [{"name": "cat", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "find the needle"},
                     {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "cat", "input": {}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": hay}]}]}
req = urllib.request.Request(base + "/v1/messages", data=json.dumps(body).encode(),
                             headers={"content-type": "application/json", "anthropic-version": "2023-06-01",
                                      "x-api-key": os.environ["ANTHROPIC_API_KEY"]})
open(sys.argv[1] + ".answer", "w").write(urllib.request.urlopen(req).read().decode())
)");
  const auto env = stand_in_env(bin, {"ANTHROPIC_BASE_URL=" + upstream.url(),  // pre-set: wrap must chain it
                                      "ANTHROPIC_API_KEY=sk-ant-chained-secret-9d41", "XDG_CACHE_HOME=" + cache.string()});
  child_process wrap({gistproxy_binary(), "wrap", "--record", record.string(), "claude", out.string()}, env);
  REQUIRE(wrap.wait(std::chrono::seconds(60)) == 0);
  const auto said = wrap.output();
  INFO(said);
  CHECK(slurp(out.string() + ".base") != upstream.url());  // pointed at the proxy
  CHECK(slurp(out.string() + ".answer").find("NEEDLE secret_port=48213") != std::string::npos);
  // The chained upstream got every request, with the agent's own key.
  const auto headers = upstream.llm_headers();
  REQUIRE(headers.size() == 2);  // the turn and its page-in hop
  for (const auto& h : headers) CHECK((h.count("x-api-key") && h.at("x-api-key") == "sk-ant-chained-secret-9d41"));
  CHECK(upstream.llm_bodies()[0].find("read_blob") != std::string::npos);
  // Never in wrap's output, the proxy's log or the recording.
  CHECK(said.find("sk-ant-chained") == std::string::npos);
  CHECK(slurp(record).find("sk-ant-chained") == std::string::npos);
  CHECK(!slurp(record).empty());
  std::size_t logs = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(cache))
    if (f.is_regular_file() && f.path().extension() == ".log") {
      ++logs;
      CHECK(slurp(f.path()).find("sk-ant-chained") == std::string::npos);
    }
  CHECK(logs == 1);
}

// `wrap cline` (a stand-in named cline that reads its provider the way Cline
// does): its base URL lives in the user's providers.json, so wrap hands it a
// copy pointed at the proxy; the URL the user's file held is chained, with
// its key, and the user's file is left as it was.
TEST_CASE("wrap cline points a copy of its providers at the proxy and chains the URL they held", "[wrap]") {
  mock_upstream upstream;
  const auto bin = temp_path("wrap-bin"), out = temp_path("wrap-cline"), home = temp_path("wrap-home");
  const auto settings = home / ".cline" / "data" / "settings";
  std::filesystem::create_directories(settings);
  const auto user_file = (settings / "providers.json").string();
  std::ofstream(user_file) << nlohmann::json{
      {"version", 1}, {"lastUsedProvider", "openai-compatible"},
      {"providers", {{"openai-compatible", {{"settings", {{"provider", "openai-compatible"}, {"apiKey", "sk-cline-chained-7b20"},
                                                          {"model", "gpt-4o"}, {"baseUrl", upstream.url() + "/v1"}}}}}}}}.dump(2);
  const auto before = slurp(user_file);
  write_stand_in(bin, "cline", R"(#!/usr/bin/env python3
import json, os, sys, urllib.request
path = os.environ.get("CLINE_PROVIDER_SETTINGS_PATH", os.path.expanduser("~/.cline/data/settings/providers.json"))
open(sys.argv[1] + ".path", "w").write(path + "\n" + os.environ.get("CLINE_SESSION_BACKEND_MODE", ""))
s = json.load(open(path))["providers"]["openai-compatible"]["settings"]
hay = "".join(f"config line {i}: key_{i}=value_{i*31%977}\n" + ("config line 2500: NEEDLE secret_port=48213\n" if i == 2500 else "") for i in range(5000))
body = {"model": s["model"], "messages": [{"role": "user", "content": "find the needle"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "run_commands", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": hay}], "tools": [{"type": "function", "function": {"name": "run_commands"}}]}
req = urllib.request.Request(s["baseUrl"] + "/chat/completions", data=json.dumps(body).encode(),
                             headers={"content-type": "application/json", "authorization": "Bearer " + s["apiKey"]})
open(sys.argv[1] + ".answer", "w").write(urllib.request.urlopen(req).read().decode())
)");
  const auto cache = temp_path("wrap-cache");
  child_process wrap({gistproxy_binary(), "wrap", "cline", out.string()},
                     stand_in_env(bin, {"HOME=" + home.string(), "XDG_CACHE_HOME=" + cache.string()}));
  REQUIRE(wrap.wait(std::chrono::seconds(60)) == 0);
  INFO(wrap.output());
  const auto seen = slurp(out.string() + ".path");
  CHECK(seen.rfind(cache.string(), 0) == 0);  // a copy in the run's own folder, not the user's file
  CHECK(seen.find("\nlocal") != std::string::npos);  // the session in-process, not in a hub daemon
  CHECK(!std::filesystem::exists(seen.substr(0, seen.find('\n'))));  // removed with the run
  CHECK(slurp(out.string() + ".answer").find("NEEDLE secret_port=48213") != std::string::npos);
  const auto headers = upstream.llm_headers();
  REQUIRE(headers.size() == 2);  // through the proxy: the turn and its page-in hop
  for (const auto& h : headers) CHECK((h.count("authorization") && h.at("authorization") == "Bearer sk-cline-chained-7b20"));
  CHECK(upstream.llm_bodies()[0].find("read_blob") != std::string::npos);
  CHECK(slurp(user_file) == before);
  CHECK(wrap.output().find("sk-cline-chained") == std::string::npos);
}
