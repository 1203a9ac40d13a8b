// `gistproxy wrap claude` with Claude Code itself (npm @anthropic-ai/claude-code,
// print mode), pre-pointed at the mock upstream as at a corporate gateway:
// wrap chains that URL as the upstream, points Claude Code at its private
// proxy, and the scripted model's Read of a 100 KB file is offloaded and paged
// back inside the proxy. Claude Code's exit status is wrap's; the summary's
// figures are the recording's; the key is in no log.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMock, stopProcess } from "./harness.mjs";

const dir = mkdtempSync(join(tmpdir(), "gistproxy-wrap-"));
const file = join(dir, "server.log");
const recording = join(dir, "record.jsonl");
const key = "sk-ant-wrap-secret-7e1d";
let mock;

before(async () => {
  const lines = [];
  for (let i = 0; i < 1800; i++) lines.push(i === 1200 ? "config line 1200: NEEDLE secret_port=48213" : `config line ${i}: key_${i}=value_${(i * 31) % 977}`);
  writeFileSync(file, lines.join("\n") + "\n");
  mock = await startMock();
});
after(async () => {
  if (mock?.process) await stopProcess(mock.process);
});

function wrap(args, env) {
  return new Promise((resolve) => {
    execFile(join(process.env.GISTPROXY_BUILD, "gistproxy"), ["wrap", ...args], {
      timeout: 100_000, cwd: dir,
      env: { PATH: `${join(process.cwd(), "node_modules/.bin")}:${process.env.PATH}`, HOME: dir,
        XDG_CACHE_HOME: join(dir, "cache"), DISABLE_TELEMETRY: "1", DISABLE_AUTOUPDATER: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", ...env },
    }, (error, stdout, stderr) => resolve({ error, stdout, stderr }));
  });
}

test("gistproxy wrap claude: chained, offloaded, paged in, its status and a summary that matches", async () => {
  const r = await wrap(["--record", recording, "claude", "-p", `agent reads ${file} for the needle`, "--allowedTools", "Read"],
    { ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: key });
  assert.equal(r.error, null, r.stderr);
  assert.match(r.stdout, /NEEDLE secret_port=48213/);
  const records = readFileSync(recording, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const offloaded = records.filter((x) => /read_blob\(\\"[0-9a-f]{16}/.test(x.forwarded_body ?? ""));
  assert.ok(offloaded.length >= 1, "the Read result went upstream as a reference");
  const hops = records.reduce((n, x) => n + (x.hops ?? 0), 0);
  assert.ok(hops >= 1, "the model's read_blob call was answered inside the proxy");
  const summary = r.stderr.match(/gistproxy: (\d+) requests; .* (\d+) page-ins, (\d+) churn; recorded to /);
  assert.ok(summary, r.stderr);
  assert.equal(Number(summary[1]), records.length);
  assert.equal(Number(summary[2]), hops);  // one read_blob call a hop in this script
  assert.ok(!r.stderr.includes(key));
  for (const f of readdirSync(join(dir, "cache", "gistproxy")).filter((n) => n.endsWith(".log")))
    assert.ok(!readFileSync(join(dir, "cache", "gistproxy", f), "utf8").includes(key));
});
