// The offload-service examples docs/service.md shows (docs/examples/), run as a user
// would run them against the real binary: a framework's own agent loop that
// offloads through POST /v1/offload/chat, calls the model itself (the
// scripted mock, as its upstream), and serves read_blob from /v1/blobs.
// The TypeScript one is type-checked (--strict) before it runs.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startMock, startProxy, stopProcess } from "./harness.mjs";

const SOURCE = process.env.GISTPROXY_SOURCE;
const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), "gistproxy-examples-"));
const expected = "found: 2501: config line 2500: NEEDLE secret_port=48213";
let mock, proxy, env, output;

function haystack() {
  let s = "";
  for (let i = 0; s.length < 200 * 1024; i++) {
    if (i === 2500) s += "config line 2500: NEEDLE secret_port=48213\n";
    s += `config line ${i}: key_${i}=value_${(i * 31) % 977}\n`;
  }
  return s;
}

async function metric(name, labels) {
  const text = await (await fetch(`${proxy.adminUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(name + "{") && labels.every((l2) => l.includes(l2)));
  return line ? Number(line.split(" ").pop()) : 0;
}

before(async () => {
  mock = await startMock();
  proxy = await startProxy(mock.url, ["--store", path.join(dir, "blobs")]);
  env = { ...process.env, GISTPROXY_URL: proxy.url, LLM_URL: mock.url, OPENAI_API_KEY: "sk-framework" };
  output = path.join(dir, "output.txt");
  writeFileSync(output, haystack());
});

after(async () => {
  for (const p of [proxy?.process, mock?.process]) if (p) await stopProcess(p);
  rmSync(dir, { recursive: true, force: true });
});

test("the Python example: offloads through the service, pages in from /v1/blobs, the model finds the needle", async () => {
  const before = await metric("gistproxy_page_ins_total", ['source="api"', 'result="ok"']);
  const { stdout } = await run("python3", [path.join(SOURCE, "docs/examples/offload_service.py"), output], { env });
  assert.equal(stdout.trim(), expected);
  assert.ok(await metric("gistproxy_page_ins_total", ['source="api"', 'result="ok"']) > before);
  assert.ok(await metric("gistproxy_offloads_total", ['source="api"']) >= 1);
});

test("the TypeScript example: type-checks under --strict, then does the same", async () => {
  const out = path.join(process.cwd(), "examples-out");
  await run(process.execPath, [path.join(process.cwd(), "node_modules/typescript/bin/tsc"), "--strict", "--target", "es2022",
    "--module", "es2022", "--moduleResolution", "bundler", "--types", "node", "--outDir", out,
    path.join(SOURCE, "docs/examples/offload_service.ts")]);
  const { stdout } = await run(process.execPath, [path.join(out, "offload_service.js"), output], { env });
  assert.equal(stdout.trim(), expected);
});

test("docs/service.md shows these exact files", async () => {
  const { readFileSync } = await import("node:fs");
  const page = readFileSync(path.join(SOURCE, "docs/service.md"), "utf8");
  for (const f of ["offload_service.py", "offload_service.ts"])
    assert.ok(page.includes(readFileSync(path.join(SOURCE, "docs/examples", f), "utf8")), `${f} as in docs/service.md`);
});
