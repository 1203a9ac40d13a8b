// `gistproxy wrap` as a careful tool: what it prints is safe under a shell's
// eval, the names it takes are names, a closed stderr does not stop it, its
// files are the user's own wherever HOME points (or does not), and a store
// it cannot write is said rather than offered to the model.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/harness.hpp"
#include "tests/integration/wrap_support.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;

namespace {

// A base URL that would run `touch MARK` if the shell ever read it as code:
// a newline, quotes, command substitutions and backticks.
std::string hostile_url(const std::filesystem::path& mark) {
  const auto m = mark.string();
  return "http://127.0.0.1:9/x\ntouch " + m + "\n'$(touch " + m + ")'\"$(touch " + m + ")\"`touch " + m + "`;touch " + m;
}

}  // namespace

TEST_CASE("wrap --print-env is safe under eval whatever the base URL holds", "[wrap]") {
  const auto mark = temp_path("eval-ran");
  const auto url = hostile_url(mark);
  const auto home = temp_path("print-env-home");  // no Cline settings: its note names the base URL
  std::filesystem::create_directories(home);
  for (const char* agent : {"claude", "codex", "gemini", "opencode", "cline"}) {
    INFO(agent);
    const auto out = temp_path("print-env.sh"), seen = temp_path("print-env-seen");
    auto printed = run_command({"env", "HOME=" + home.string(), gistproxy_binary(), "wrap", "--print-env", "--base-url", url, agent});
    REQUIRE(printed.exit_code == 0);
    std::ofstream(out) << printed.output;
    // As a user would: eval "$(gistproxy wrap --print-env ...)".
    auto evaluated = run_command({"bash", "-c", "eval \"$(cat " + out.string() + ")\" && printf %s \"${ANTHROPIC_BASE_URL-}\" > " +
                                                    seen.string()});
    INFO(printed.output);
    CHECK(evaluated.exit_code == 0);
    CHECK(!std::filesystem::exists(mark));
    if (std::string(agent) == "claude") CHECK(slurp(seen) == url);  // the value, byte for byte
  }
}

TEST_CASE("wrap --base-url-env refuses a name that is not an environment variable's", "[wrap]") {
  const auto mark = temp_path("name-ran");
  const std::vector<std::string> names = {"X=1; touch " + mark.string() + "; Y", "1ST", "MY-URL", "A B",
                                          "$(touch " + mark.string() + ")"};
  for (const auto& name : names) {
    INFO(name);
    auto printed = run_command({gistproxy_binary(), "wrap", "--print-env", "--base-url-env", name, "--", "true"});
    CHECK(printed.exit_code == 2);
    CHECK(printed.output.find("not an environment variable") != std::string::npos);
    CHECK(printed.output.find("export") == std::string::npos);
    auto ran = run_command({gistproxy_binary(), "wrap", "--base-url-env", name, "--", "touch", mark.string()});
    CHECK(ran.exit_code == 2);
    CHECK(!std::filesystem::exists(mark));
  }
  CHECK(run_command({gistproxy_binary(), "wrap", "--print-env", "--base-url-env", "MY_URL_2", "--", "true"}).exit_code == 0);
}

// wrap's first words ("... behind http://...") go to a pipe no one reads:
// were SIGPIPE at its default, wrap would die there, its agent never run.
TEST_CASE("a closed stderr does not end wrap before its agent runs", "[wrap]") {
  const auto cache = temp_path("closed-stderr-cache"), ran = temp_path("closed-stderr-ran");
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  ::close(pipe_fds[0]);  // no reader: a write raises SIGPIPE
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::vector<std::string> args = {gistproxy_binary(), "wrap", "--base-url-env", "MY_BASE_URL", "--",
                                   "sh", "-c", "echo ran > " + ran.string() + "; exit 3"};
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "XDG_CACHE_HOME=" + cache.string()};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()) == 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  int status = 0;
  const bool ended = eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, std::chrono::seconds(60));
  if (!ended) ::kill(pid, SIGKILL), ::waitpid(pid, &status, 0);
  REQUIRE(ended);
  CHECK(WIFEXITED(status));
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 3));  // the agent ran, and its status is wrap's
  CHECK(slurp(ran) == "ran\n");
}

// With HOME unset the folder is in the shared temp folder, where another
// user could have made it first to read (or swap) what wrap keeps there.
TEST_CASE("with HOME unset wrap keeps its files in a folder of the user's own, and refuses another user's", "[wrap]") {
  const auto tmp = temp_path("no-home-tmp"), ran = temp_path("no-home-ran");
  std::filesystem::create_directories(tmp);
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "TMPDIR=" + tmp.string()};  // no HOME, no XDG_CACHE_HOME
  const std::vector<std::string> wrap = {gistproxy_binary(), "wrap", "--base-url-env", "MY_BASE_URL", "--",
                                         "sh", "-c", "echo ran >> " + ran.string()};
  child_process first(wrap, env);
  REQUIRE(first.wait(std::chrono::seconds(60)) == 0);
  INFO(first.output());
  const auto folder = tmp / ("gistproxy-" + std::to_string(::geteuid()));
  struct stat st {};
  REQUIRE(::lstat(folder.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(slurp(ran) == "ran\n");
  if (::geteuid() != 0) {
    WARN("not root: cannot give the folder to another user; the refusal is not checked");
    return;
  }
  REQUIRE(::chown(folder.c_str(), 65534, 65534) == 0);  // nobody's
  child_process second(wrap, env);
  CHECK(second.wait(std::chrono::seconds(60)) == 1);
  INFO(second.output());
  CHECK(second.output().find("belongs to another user") != std::string::npos);
  CHECK(slurp(ran) == "ran\n");  // the agent did not run with its files there
}

// A file where the store's folder should be: as unwritable as a read-only
// disk, for root too. The agent still runs, through a proxy that offers
// nothing it could not page back.
TEST_CASE("an unwritable store is said on stderr and read_blob is not offered", "[wrap]") {
  mock_upstream upstream;
  const auto cache = temp_path("unwritable-cache"), store = temp_path("store-is-a-file"), out = temp_path("unwritable-agent");
  std::ofstream(store) << "not a folder\n";
  const auto script = temp_path("agent.py");
  std::ofstream(script) << R"(
import json, os, sys, urllib.request
hay = "".join(f"config line {i}: key_{i}=value_{i*31%977}\n" for i in range(5000))
body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "find the needle"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": hay}], "tools": [{"type": "function", "function": {"name": "cat"}}]}
req = urllib.request.Request(os.environ["MY_BASE_URL"] + "/v1/chat/completions", data=json.dumps(body).encode(),
                             headers={"content-type": "application/json", "authorization": "Bearer sk-test"})
open(sys.argv[1], "w").write(urllib.request.urlopen(req).read().decode())
)";
  child_process wrap({gistproxy_binary(), "wrap", "--store", store.string(), "--base-url-env", "MY_BASE_URL", "--",
                      "python3", script.string(), out.string()},
                     stand_in_env(temp_path("no-bin"), {"MY_BASE_URL=" + upstream.url(), "XDG_CACHE_HOME=" + cache.string()}));
  REQUIRE(wrap.wait(std::chrono::seconds(60)) == 0);
  INFO(wrap.output());
  CHECK(wrap.output().find("the store " + store.string() + " cannot be written") != std::string::npos);
  CHECK(wrap.output().find("read_blob is not offered") != std::string::npos);
  const auto bodies = upstream.llm_bodies();
  REQUIRE(bodies.size() == 1);
  CHECK(bodies[0].find("read_blob") == std::string::npos);
  CHECK(bodies[0].find("config line 4999") != std::string::npos);  // the output as it was
  CHECK(!slurp(out).empty());
}

// nohup (or a script's `cmd &`) starts wrap with a signal ignored: the
// agent under it must keep ignoring it, as it would without wrap.
TEST_CASE("a signal wrap was started with ignored (nohup's SIGHUP) stays ignored for its agent", "[wrap]") {
  const auto cache = temp_path("nohup-cache"), alive = temp_path("nohup-alive");
  child_process wrap({"nohup", gistproxy_binary(), "wrap", "--base-url-env", "MY_BASE_URL", "--",
                      "sh", "-c", "kill -HUP $$; echo alive > " + alive.string()},
                     stand_in_env(temp_path("no-bin"), {"XDG_CACHE_HOME=" + cache.string()}));
  CHECK(wrap.wait(std::chrono::seconds(60)) == 0);
  INFO(wrap.output());
  CHECK(slurp(alive) == "alive\n");
}
