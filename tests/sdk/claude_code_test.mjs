// Claude Code itself (npm @anthropic-ai/claude-code, print mode) through
// gistproxy in Bedrock mode and in Vertex mode, against the mock upstream:
// the scripted model asks Claude Code's own Read tool for a 100 KB file,
// gistproxy offloads that tool result, the model's read_blob call is answered
// inside the proxy (from a Bedrock event-stream, or Vertex's SSE), and Claude
// Code prints the line buried in the file. The recording shows the offload
// and the page-in hop.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { completeLines, startMock, startProxy, stopProcess } from "./harness.mjs";

const dir = mkdtempSync(join(tmpdir(), "gistproxy-claude-code-"));
const file = join(dir, "server.log");
const recording = join(dir, "record.jsonl");
let mock, proxy;

before(async () => {
  const lines = [];
  for (let i = 0; i < 1800; i++) lines.push(i === 1200 ? "config line 1200: NEEDLE secret_port=48213" : `config line ${i}: key_${i}=value_${(i * 31) % 977}`);
  writeFileSync(file, lines.join("\n") + "\n");
  mock = await startMock();
  // Bedrock requests without credentials are signed by gistproxy (CLAUDE_CODE_SKIP_BEDROCK_AUTH).
  proxy = await startProxy(mock.url, ["--sign-bedrock", "on", "--record", recording],
    { AWS_ACCESS_KEY_ID: "AKIDGISTPROXY", AWS_SECRET_ACCESS_KEY: "gistproxy-secret" });
});
after(async () => {
  for (const p of [proxy?.process, mock?.process]) if (p) await stopProcess(p);
});

function claude(env) {
  return new Promise((resolve) => {
    execFile(join(process.cwd(), "node_modules/.bin/claude"), ["-p", `agent reads ${file} for the needle`, "--allowedTools", "Read"], {
      timeout: 90_000, cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, DISABLE_TELEMETRY: "1", DISABLE_AUTOUPDATER: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", ...env },
    }, (error, stdout, stderr) => resolve({ error, stdout, stderr }));
  });
}

function recorded(api) {
  return completeLines(recording).filter((r) => r.api === api);
}

async function waitForRecords(api, predicate) {
  for (let i = 0; i < 100; i++) {
    if (predicate(recorded(api))) return recorded(api);
    await new Promise((r) => setTimeout(r, 50));
  }
  return recorded(api);
}

function checkOffloadAndPageIn(records) {
  // A reference in the forwarded JSON: read_blob(\"<handle>\") (quotes escaped in the body).
  const offloaded = records.filter((r) => /read_blob\(\\"[0-9a-f]{16}/.test(r.forwarded_body ?? ""));
  assert.ok(offloaded.length >= 1, "the Read result went upstream as a reference");
  assert.ok(offloaded.every((r) => r.forwarded_body.length < r.request_body.length - 50_000));
  assert.ok(records.some((r) => r.hops >= 1), "the model's read_blob call was answered inside the proxy");
}

test("Claude Code in Bedrock mode (CLAUDE_CODE_USE_BEDROCK, auth skipped, gistproxy signs)", async () => {
  const r = await claude({ CLAUDE_CODE_USE_BEDROCK: "1", ANTHROPIC_BEDROCK_BASE_URL: proxy.url,
    CLAUDE_CODE_SKIP_BEDROCK_AUTH: "1", AWS_REGION: "us-east-1" });
  assert.equal(r.error, null, r.stderr);
  assert.match(r.stdout, /NEEDLE secret_port=48213/);
  assert.ok(!r.stdout.includes("read_blob"));
  checkOffloadAndPageIn(await waitForRecords("bedrock-messages", (rs) => rs.some((x) => x.hops >= 1)));
});

test("Claude Code in Vertex mode (CLAUDE_CODE_USE_VERTEX, auth skipped)", async () => {
  const r = await claude({ CLAUDE_CODE_USE_VERTEX: "1", ANTHROPIC_VERTEX_BASE_URL: `${proxy.url}/v1`,
    CLAUDE_CODE_SKIP_VERTEX_AUTH: "1", CLOUD_ML_REGION: "us-east5", ANTHROPIC_VERTEX_PROJECT_ID: "proj" });
  assert.equal(r.error, null, r.stderr);
  assert.match(r.stdout, /NEEDLE secret_port=48213/);
  assert.ok(!r.stdout.includes("read_blob"));
  checkOffloadAndPageIn(await waitForRecords("vertex-messages", (rs) => rs.some((x) => x.hops >= 1)));
});
