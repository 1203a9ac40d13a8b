// `gistproxy wrap AGENT` with each real agent CLI (the npm packages pinned in
// package.json: Claude Code, Codex, Gemini CLI, opencode, Cline), each
// pre-pointed at the mock upstream as at a corporate gateway: wrap chains that
// URL as the upstream and points the agent at its private proxy. The scripted
// model (tests/support/agent_plan.hpp) asks the agent's own shell tool to
// print a large log, gistproxy offloads it, the model's read_blob call is
// answered inside the proxy, and the agent prints the buried line. The agent's
// exit status is wrap's; the summary's figures are the recording's; the
// credential is in no log; the user's own settings files are untouched.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { startMock, stopProcess } from "./harness.mjs";

// Gemini CLI skips a settings file below a folder writable by group or
// others (/tmp), and wrap's overlay goes under XDG_CACHE_HOME: the test's
// folder is under the build tree when no folder above it is such, else
// (a checkout under /tmp) under the user's home.
function underNoSharedFolder(path) {
  for (let p = path; ; p = dirname(p)) {
    if (statSync(p).mode & 0o022) return false;
    if (dirname(p) === p) return true;
  }
}
const base = underNoSharedFolder(process.cwd()) ? process.cwd() : homedir();
const dir = mkdtempSync(join(base, "gistproxy-wrap-agents-"));
const bin = join(process.cwd(), "node_modules/.bin");
const needle = /NEEDLE secret_port=48213/;
let mock;

// A log of `lines` lines with the needle two thirds in.
function writeLog(name, lines) {
  const out = [];
  for (let i = 0; i < lines; i++)
    out.push(i === Math.floor(lines * 2 / 3) ? `config line ${i}: NEEDLE secret_port=48213` : `config line ${i}: key_${i}=value_${(i * 31) % 977}`);
  writeFileSync(join(dir, name), out.join("\n") + "\n");
}

before(async () => {
  writeLog("big.log", 1800);    // 64 KB: over Gemini CLI's, opencode's and Codex's default cuts
  writeLog("small.log", 1200);  // 42 KB: under Cline's fixed 48,000-character cut
  // 26 KB: Claude Code 2.1 moves a Bash result over 30,000 characters out of
  // the request (to a file, a 2 KB preview sent), whatever BASH_MAX_OUTPUT_LENGTH says.
  writeLog("medium.log", 750);
  mock = await startMock();
});
after(async () => {
  if (mock?.process) await stopProcess(mock.process);
  rmSync(dir, { recursive: true, force: true });
});

// The plan the scripted model follows: the agent's shell tool, then read_blob.
function plan(tool, args) {
  return "agent runs: " + JSON.stringify([{ name: tool, arguments: args }, { name: "read_blob", arguments: { pattern: "NEEDLE" } }]);
}

function run(program, args, env, home) {
  return new Promise((resolve) => {
    const child = execFile(program, args, {
      timeout: 100_000, cwd: dir, maxBuffer: 16 << 20,
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: home, XDG_CACHE_HOME: join(home, "cache"), ...env },
    }, (error, stdout, stderr) => resolve({ status: error ? (error.code ?? 1) : 0, stdout, stderr }));
    child.stdin.end();  // no terminal: the agents' non-interactive modes
  });
}

// One agent through wrap; its home folder of its own.
async function wrap(agent, args, env, setup) {
  const home = join(dir, agent);
  mkdirSync(home, { recursive: true });
  if (setup) await setup(home);
  const recording = join(home, "record.jsonl");
  const r = await run(join(process.env.GISTPROXY_BUILD, "gistproxy"), ["wrap", "--record", recording, agent, ...args], env, home);
  return { ...r, home, recording };
}

function check(r, key) {
  assert.equal(r.status, 0, r.stderr);  // the agent's own status, through wrap
  assert.match(r.stdout, needle, r.stderr);
  const records = readFileSync(r.recording, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  // A reference in the forwarded JSON: read_blob(\"<handle>\") (quotes escaped in the body).
  assert.ok(records.some((x) => /read_blob\(\\"[0-9a-f]{16}/.test(x.forwarded_body ?? "")), "the shell output went upstream as a reference");
  const hops = records.reduce((n, x) => n + (x.hops ?? 0), 0);
  assert.ok(hops >= 1, "the model's read_blob call was answered inside the proxy");
  const summary = r.stderr.match(/gistproxy: (\d+) requests; .* (\d+) page-ins, (\d+) churn; recorded to /);
  assert.ok(summary, r.stderr);
  assert.equal(Number(summary[1]), records.length);
  assert.equal(Number(summary[2]), hops);  // one read_blob call a hop in this plan
  assert.ok(!r.stderr.includes(key), "the credential is not on wrap's stderr");
  const logs = join(r.home, "cache", "gistproxy");
  for (const f of readdirSync(logs).filter((n) => n.endsWith(".log")))
    assert.ok(!readFileSync(join(logs, f), "utf8").includes(key), `the credential is not in ${f}`);
  assert.ok(!readdirSync(logs).some((n) => n.startsWith("overlay-")), "the run's settings overlay is gone");
}

// Skipped only when npm could not install the package (make test installs it).
function agentTest(name, program, body) {
  const missing = !existsSync(join(bin, program));
  test(`gistproxy wrap ${name}: offloaded, paged in, its status and a summary that matches`,
    { skip: missing && `${program} is not installed (npm ci in the build's sdk folder installs it)` }, body);
}

agentTest("claude", "claude", async () => {
  const key = "sk-ant-wrap-secret-7e1d";
  const r = await wrap("claude", ["-p", plan("Bash", { command: "cat medium.log", description: "print the log" }), "--allowedTools", "Bash"],
    { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: key, DISABLE_TELEMETRY: "1", DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" });
  check(r, key);
});

agentTest("codex", "codex", async () => {
  const key = "sk-codex-wrap-secret-51c3";
  const r = await wrap("codex", ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", "gpt-5",
    plan("exec_command", { cmd: "cat big.log", max_output_tokens: 100000 })],
    { OPENAI_BASE_URL: `${mock.url}/v1`, OPENAI_API_KEY: key, CODEX_HOME: join(dir, "codex", ".codex") },
    (home) => mkdirSync(join(home, ".codex"), { recursive: true }));
  check(r, key);
  // Codex's own default transport through wrap: the Responses WebSocket, no HTTP fallback.
  const protocols = readFileSync(r.recording, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l).protocol);
  assert.deepEqual([...new Set(protocols)], ["WebSocket"]);
});

agentTest("gemini", "gemini", async () => {
  const key = "gemini-wrap-secret-90ab";
  const r = await wrap("gemini", ["-m", "gemini-2.5-pro", "--yolo", "-p",
    plan("run_shell_command", { command: "cat big.log", description: "print the log" })],
    { GOOGLE_GEMINI_BASE_URL: mock.url, GEMINI_API_KEY: key, GEMINI_CLI_TRUST_WORKSPACE: "true" });
  check(r, key);
});

agentTest("opencode", "opencode", async () => {
  const key = "sk-ant-opencode-secret-33d0";
  const r = await wrap("opencode", ["run", "-m", "anthropic/claude-sonnet-4-5",
    plan("bash", { command: "cat big.log", description: "print the log" })],
    { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: key, OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1" });
  check(r, key);
});

agentTest("cline", "cline", async () => {
  const key = "sk-cline-wrap-secret-6f2e";
  const providers = (home) => join(home, ".cline", "data", "settings", "providers.json");
  // Pre-pointed at the mock the way Cline documents: its own settings, by
  // `cline auth -b` (in-process, leaving no background hub behind).
  const r = await wrap("cline", [plan("run_commands", { commands: ["cat small.log"] })], {}, async (home) => {
    const auth = await run(join(bin, "cline"), ["auth", "-p", "openai-compatible", "-k", key, "-b", `${mock.url}/v1`, "-m", "gpt-4o"],
      { CLINE_SESSION_BACKEND_MODE: "local" }, home);
    assert.equal(auth.status, 0, auth.stderr);
    writeFileSync(join(home, "providers.before"), readFileSync(providers(home)));
  });
  check(r, key);
  assert.equal(readFileSync(providers(r.home), "utf8"), readFileSync(join(r.home, "providers.before"), "utf8"), "the user's providers.json is untouched");
  const daemons = hubDaemons(r.home);
  for (const pid of daemons) process.kill(pid);  // the test's own, were there any
  assert.deepEqual(daemons, [], "no Cline hub daemon outlives wrap");
});

// Cline's background hub daemons started with this HOME (Linux /proc).
function hubDaemons(home) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--cline-hub-daemon")) continue;
      if (readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`HOME=${home}`)) found.push(Number(pid));
    } catch { /* gone, or not ours to read */ }
  }
  return found;
}
