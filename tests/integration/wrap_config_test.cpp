// The agents' own settings files, as `gistproxy wrap` reads them: Cline's
// providers file when it is not a file (said, never a hang or a wrong
// verdict), and a gateway set in Codex's config.toml or opencode's
// opencode.json, chained as one set in the environment is (the stand-ins
// resolve their settings as the real CLIs do: Codex's -c over config.toml,
// a profile's provider over model_provider; opencode's files merged, with
// OPENCODE_CONFIG_CONTENT last), or said when it cannot be.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "tests/integration/harness.hpp"
#include "tests/integration/wrap_support.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;

namespace {

// One turn with a long tool output through `base` (the API's own paths
// after it), the key from `key_env`; the answer in argv[1].
constexpr const char* turn_py = R"py(
import json, os, sys, urllib.request
def turn(url, headers, kind):
    hay = "".join(f"config line {i}: key_{i}=value_{i*31%977}\n" for i in range(5000))
    if kind == "responses":
        body = {"model": "gpt-5", "input": [{"role": "user", "content": "find the needle"},
                {"type": "function_call", "call_id": "c1", "name": "cat", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": hay}],
                "tools": [{"type": "function", "name": "cat", "parameters": {"type": "object"}}]}
    else:
        body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": [{"name": "cat", "input_schema": {"type": "object"}}],
                "messages": [{"role": "user", "content": "find the needle"},
                             {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "cat", "input": {}}]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": hay}]}]}
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json", **headers})
    open(sys.argv[-1], "w").write(urllib.request.urlopen(req).read().decode())
)py";

// Codex as it resolves its provider (codex-rs model_provider_resolution):
// -c overrides merged over config.toml, --profile or `profile`, the
// profile's model_provider, else model_provider, else "openai".
const std::string codex_py = std::string("#!/usr/bin/env python3\n") + turn_py + R"py(
import tomllib
home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
try: cfg = tomllib.load(open(home + "/config.toml", "rb"))
except FileNotFoundError: cfg = {}
args, i, profile = sys.argv[1:], 0, None
while i < len(args):
    if args[i] == "-c":
        key, value = args[i + 1].split("=", 1)
        try: value = tomllib.loads("v = " + value)["v"]
        except Exception: pass
        node = cfg
        for k in key.split(".")[:-1]: node = node.setdefault(k, {})
        node[key.split(".")[-1]] = value
        i += 2
    elif args[i] in ("-p", "--profile"): profile, i = args[i + 1], i + 2
    else: i += 1
profile = profile or cfg.get("profile")
pid = cfg.get("profiles", {}).get(profile, {}).get("model_provider") if profile else None
pid = pid or cfg.get("model_provider") or "openai"
if pid == "openai": p = {"base_url": cfg.get("openai_base_url") or os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"), "env_key": "OPENAI_API_KEY"}
else: p = cfg["model_providers"][pid]
turn(p["base_url"] + "/responses", {"authorization": "Bearer " + os.environ.get(p.get("env_key", "OPENAI_API_KEY"), "")}, "responses")
)py";

// opencode as it merges its config: the global file, OPENCODE_CONFIG, the
// project's, then OPENCODE_CONFIG_CONTENT; the Anthropic provider's baseURL
// over ANTHROPIC_BASE_URL.
const std::string opencode_py = std::string("#!/usr/bin/env python3\n") + turn_py + R"py(
import re
def load(path):
    try: text = open(path).read()
    except FileNotFoundError: return {}
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))
def merge(a, b):
    for k, v in b.items():
        a[k] = merge(a.get(k, {}), v) if isinstance(v, dict) and isinstance(a.get(k), dict) else v
    return a
cfg = {}
for part in [load(os.path.expanduser("~/.config/opencode/opencode.json")), load(os.environ.get("OPENCODE_CONFIG", "/nonexistent")),
             load("opencode.json"), json.loads(os.environ.get("OPENCODE_CONFIG_CONTENT", "{}"))]:
    cfg = merge(cfg, part)
base = cfg.get("provider", {}).get("anthropic", {}).get("options", {}).get("baseURL") or os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com/v1")
turn(base + "/messages", {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"}, "messages")
)py";

struct agent_run {
  int status = -1;
  std::string said;
};

agent_run wrap_stand_in(const std::string& agent, const std::string& script, const std::filesystem::path& home,
                        const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  const auto bin = temp_path("wrap-bin");
  write_stand_in(bin, agent, script);
  auto env = stand_in_env(bin, {"HOME=" + home.string(), "XDG_CACHE_HOME=" + (home / "cache").string()});
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<std::string> argv = {gistproxy_binary(), "wrap", agent};
  argv.insert(argv.end(), args.begin(), args.end());
  child_process wrap(argv, env);
  agent_run r;
  r.status = wrap.wait(std::chrono::seconds(60));
  r.said = wrap.output();
  return r;
}

// The upstream got the turn through the proxy (an offload: read_blob
// offered), with the user's own key for that gateway.
void check_chained(const mock_upstream& upstream, const agent_run& r, const std::string& header, const std::string& key) {
  INFO(r.said);
  CHECK(r.status == 0);
  const auto bodies = upstream.llm_bodies();
  REQUIRE(!bodies.empty());
  CHECK(bodies[0].find("read_blob") != std::string::npos);
  const auto headers = upstream.llm_headers();
  CHECK((headers[0].count(header) && headers[0].at(header).find(key) != std::string::npos));
}

}  // namespace

TEST_CASE("Cline's providers file as a folder, a FIFO or over 1 MiB is said, with no hang and no wrong verdict", "[wrap]") {
  struct kind {
    const char* name;
    const char* said;
  };
  for (const auto& k : {kind{"folder", "is a folder"}, kind{"fifo", "is a FIFO"}, kind{"huge", "is larger than 1 MiB"}}) {
    INFO(k.name);
    const auto home = temp_path("cline-home"), ran = temp_path("cline-ran");
    const auto settings = home / ".cline" / "data" / "settings";
    std::filesystem::create_directories(settings);
    const auto file = settings / "providers.json";
    if (std::string(k.name) == "folder") std::filesystem::create_directories(file);
    if (std::string(k.name) == "fifo") REQUIRE(::mkfifo(file.c_str(), 0600) == 0);  // no writer: an open would wait forever
    if (std::string(k.name) == "huge") std::ofstream(file) << "{\"lastUsedProvider\": \"openai-compatible\", \"pad\": \"" << std::string(2 << 20, 'x') << "\"}";
    auto r = wrap_stand_in("cline", "#!/bin/sh\necho ran > \"$1\"\n", home, {ran.string()}, {});
    INFO(r.said);
    CHECK(r.status == 0);  // the agent ran, as Cline would with a file it cannot read
    CHECK(slurp(ran) == "ran\n");
    CHECK(r.said.find("Cline's providers file " + file.string() + " " + k.said) != std::string::npos);
    CHECK(r.said.find("not openai-compatible") == std::string::npos);
  }
}

TEST_CASE("a gateway in Codex's config.toml is chained as one in the environment is, or said", "[wrap]") {
  mock_upstream upstream;
  const auto home = temp_path("codex-home");
  std::filesystem::create_directories(home / ".codex");
  auto config = [&](const std::string& text) { std::ofstream(home / ".codex" / "config.toml") << text; };
  SECTION("the selected provider's base_url, with its own key") {
    config("model = \"gpt-5\"\nmodel_provider = \"corp\"  # the gateway\n\n[model_providers.corp]\nname = \"Corp\"\nbase_url = \"" +
           upstream.url() + "/v1\"\nenv_key = \"CORP_KEY\"\nwire_api = \"responses\"\n");
    check_chained(upstream, wrap_stand_in("codex", codex_py, home, {"exec", temp_path("answer").string()}, {"CORP_KEY=corp-key-81f0"}),
                  "authorization", "corp-key-81f0");
  }
  SECTION("a profile's provider, over model_provider") {
    config("profile = \"work\"\nmodel_provider = \"openai\"\n[profiles.work]\nmodel_provider = \"corp\"\n"
           "[model_providers.corp]\nbase_url = '" + upstream.url() + "/v1'\nenv_key = \"CORP_KEY\"\n");
    check_chained(upstream, wrap_stand_in("codex", codex_py, home, {"exec", temp_path("answer").string()}, {"CORP_KEY=corp-key-81f0"}),
                  "authorization", "corp-key-81f0");
  }
  SECTION("openai_base_url, for OpenAI's own provider") {
    config("openai_base_url = \"" + upstream.url() + "/v1\"\n");
    check_chained(upstream, wrap_stand_in("codex", codex_py, home, {"exec", temp_path("answer").string()}, {"OPENAI_API_KEY=sk-oa-5522"}),
                  "authorization", "sk-oa-5522");
  }
  SECTION("a provider wrap cannot chain is said") {
    config("model_provider = \"corp\"\n[model_providers.corp]\nenv_key = \"CORP_KEY\"\n");
    auto r = wrap_stand_in("codex", "#!/bin/sh\nexit 0\n", home, {}, {});
    INFO(r.said);
    CHECK(r.status == 0);
    CHECK(r.said.find("Codex's model provider 'corp'") != std::string::npos);
    CHECK(r.said.find("not chained") != std::string::npos);
  }
}

TEST_CASE("a gateway in opencode's opencode.json is chained as one in the environment is, or said", "[wrap]") {
  mock_upstream upstream;
  const auto home = temp_path("opencode-home");
  std::filesystem::create_directories(home / ".config" / "opencode");
  const auto global = home / ".config" / "opencode" / "opencode.json";
  SECTION("the Anthropic provider's baseURL, in JSONC") {
    std::ofstream(global) << "{\n  // the corporate gateway\n  \"provider\": {\"anthropic\": {\"options\": {\"baseURL\": \"" +
                                 upstream.url() + "/v1\",},},},\n}\n";
    check_chained(upstream,
                  wrap_stand_in("opencode", opencode_py, home, {"run", temp_path("answer").string()},
                                {"ANTHROPIC_API_KEY=sk-ant-oc-7d21", "ANTHROPIC_BASE_URL=http://127.0.0.1:9"}),
                  "x-api-key", "sk-ant-oc-7d21");
  }
  SECTION("a substitution wrap cannot follow is said") {
    std::ofstream(global) << R"({"provider": {"anthropic": {"options": {"baseURL": "{file:~/gateway-url}"}}}})";
    auto r = wrap_stand_in("opencode", "#!/bin/sh\nexit 0\n", home, {}, {});
    INFO(r.said);
    CHECK(r.status == 0);
    CHECK(r.said.find("opencode's anthropic baseURL in " + global.string()) != std::string::npos);
    CHECK(r.said.find("not chained") != std::string::npos);
  }
}
