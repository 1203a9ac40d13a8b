// How a `gistproxy wrap` run ends when it does not end well: killed outright
// (its proxy goes with it; the next wrap removes the credential copy it
// left), or interrupted while its proxy drains (the copy still goes).
#include <catch2/catch.hpp>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "tests/integration/harness.hpp"
#include "tests/integration/wrap_support.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;

namespace {

// Cline pointed at an OpenAI-compatible gateway, with a key: wrap writes a
// copy of these settings, key and all, into the run's overlay.
std::filesystem::path cline_home(const std::string& gateway) {
  const auto home = temp_path("wrap-home");
  const auto settings = home / ".cline" / "data" / "settings";
  std::filesystem::create_directories(settings);
  std::ofstream(settings / "providers.json") << nlohmann::json{
      {"version", 1}, {"lastUsedProvider", "openai-compatible"},
      {"providers", {{"openai-compatible", {{"settings", {{"provider", "openai-compatible"}, {"apiKey", "sk-cline-left-behind-3c1d"},
                                                          {"model", "gpt-4o"}, {"baseUrl", gateway + "/v1"}}}}}}}}.dump(2);
  return home;
}

}  // namespace

TEST_CASE("a wrap killed outright takes its proxy with it, and the next wrap removes the key copy it left", "[wrap]") {
  mock_upstream upstream;
  const auto bin = temp_path("wrap-bin"), out = temp_path("killed-cline"), cache = temp_path("killed-cache");
  const auto home = cline_home(upstream.url());
  // Says where its settings copy is, then waits (as an agent at its prompt).
  write_stand_in(bin, "cline", R"(#!/bin/sh
echo "$CLINE_PROVIDER_SETTINGS_PATH" > "$1.tmp" && mv "$1.tmp" "$1"
exec sleep 120
)");
  const auto env = stand_in_env(bin, {"HOME=" + home.string(), "XDG_CACHE_HOME=" + cache.string()});
  child_process wrap({gistproxy_binary(), "wrap", "--drain-timeout", "2s", "cline", out.string()}, env);
  REQUIRE(eventually([&] { return !slurp(out).empty(); }));
  const auto copy = slurp(out).substr(0, slurp(out).find('\n'));
  REQUIRE(slurp(copy).find("sk-cline-left-behind") != std::string::npos);
  pid_t proxy = 0, agent = 0;
  for (pid_t child : children_of(wrap.pid()))
    (slurp("/proc/" + std::to_string(child) + "/cmdline").find("serve") != std::string::npos ? proxy : agent) = child;
  REQUIRE(proxy > 0);
  REQUIRE(agent > 0);

  ::kill(wrap.pid(), SIGKILL);  // no handler, no cleanup: only the kernel acts
  ::kill(agent, SIGKILL);  // the stand-in would outlive wrap (as an agent would), holding wrap's output open
  // Not wait(): it also reads wrap's output to its end, which a proxy
  // that outlived wrap would hold open.
  CHECK(eventually([&] { return !wrap.running(); }, std::chrono::seconds(10)));
  const bool proxy_gone = eventually([&] { return has_exited(proxy); });
  if (!proxy_gone) ::kill(proxy, SIGKILL);  // the test's own
  CHECK(proxy_gone);
  CHECK(std::filesystem::exists(copy));  // left behind: nothing ran to remove it

  child_process next({gistproxy_binary(), "wrap", "--base-url-env", "MY_BASE_URL", "--", "true"}, env);
  REQUIRE(next.wait(std::chrono::seconds(60)) == 0);
  INFO(next.output());
  CHECK(!std::filesystem::exists(copy));
  CHECK(overlays_in(cache).empty());
}

// The agent is gone but a request it started is still in flight (a helper
// process of its own holds it, and ignores Ctrl-C): the proxy drains, and
// the user, tired of waiting, presses Ctrl-C.
TEST_CASE("Ctrl-C while the proxy drains stops the wait and still removes the run's overlay", "[wrap]") {
  mock_upstream upstream;
  const auto out = temp_path("drain-agent"), cache = temp_path("drain-cache");
  const auto script = temp_path("drain-agent.py");
  std::ofstream(script) << R"(
import json, os, signal, subprocess, sys, time
out = sys.argv[1]
if len(sys.argv) > 2:  # the helper: one streamed turn whose answer never comes
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import urllib.request
    open(out + ".helper", "w").write(str(os.getpid()))
    hay = "".join(f"config line {i}: key_{i}=value_{i*31%977}\n" for i in range(5000))
    body = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hang second hop"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": hay}], "tools": [{"type": "function", "function": {"name": "cat"}}]}
    req = urllib.request.Request(os.environ["MY_BASE_URL"] + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json", "authorization": "Bearer sk-test"})
    urllib.request.urlopen(req).read()
    sys.exit(0)
subprocess.Popen([sys.executable, sys.argv[0], out, "helper"], start_new_session=False)
deadline = time.time() + 60
while not os.path.exists(out + ".go") and time.time() < deadline:
    time.sleep(0.02)
sys.exit(0)
)";
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "XDG_CACHE_HOME=", 15) != 0) env.emplace_back(*e);
  env.push_back("XDG_CACHE_HOME=" + cache.string());
  env.push_back("MY_BASE_URL=" + upstream.url());
  // setsid: wrap leads its own group, as a shell's foreground job does.
  child_process wrap({"setsid", gistproxy_binary(), "wrap", "--drain-timeout", "60s", "--base-url-env", "MY_BASE_URL", "--",
                      "python3", script.string(), out.string()},
                     env);
  // Both hops of the helper's turn reached the upstream: the second hangs inside the proxy.
  REQUIRE(eventually([&] { return upstream.llm_bodies().size() >= 2; }));
  REQUIRE(overlays_in(cache).size() == 1);
  std::ofstream(out.string() + ".go") << "go";
  const bool draining = wrap.wait_for_output(
      [](const std::string& o) { return o.find("finishing the requests in flight") != std::string::npos; },
      std::chrono::seconds(30));
  ::kill(-wrap.pid(), SIGINT);  // the terminal's Ctrl-C: to the whole foreground group
  const int status = wrap.wait(std::chrono::seconds(20));
  const auto helper = slurp(out.string() + ".helper");
  if (!helper.empty()) ::kill(pid_t(std::stoi(helper)), SIGKILL);
  INFO(wrap.output());
  CHECK(draining);
  CHECK(status == 0);  // the agent's status: it ended well, wrap only stopped waiting
  CHECK(wrap.output().find("stopped waiting for the proxy") != std::string::npos);
  CHECK(overlays_in(cache).empty());
}
