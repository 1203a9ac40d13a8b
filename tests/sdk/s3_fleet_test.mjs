// Two gistproxy replicas on one S3 bucket (s3rver, a Node.js implementation
// of the S3 REST API, on loopback). For every API: an output offloaded
// through replica A is paged in through replica B, which receives only the
// reference A forwarded (never the bytes). Then: a tampered object is an
// integrity failure (page-in and `blob verify`); with the S3 server stopped,
// offloads forward the originals and page-ins answer the model with a tool
// error, both counted, both replicas healthy; the server back, offloading
// resumes; replica B's local cache (--store-cache) still serves what it paged
// in before the outage. s3rver accepts any signature, so the signing is proven elsewhere
// (sigv4_test.cpp: AWS's vectors; s3_signing_test.mjs: @smithy/signature-v4).
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import S3rver from "s3rver";
import { completeLines, startMock, startProxy, stopProcess, waitFor } from "./harness.mjs";

const BUILD = process.env.GISTPROXY_BUILD;
const BUCKET = "gistproxy-fleet";
const PREFIX = "team-a/blobs";
const ENV = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER", AWS_REGION: "us-east-1" };
const dir = mkdtempSync(path.join(tmpdir(), "gistproxy-s3-"));
const recording = path.join(dir, "replica-a.jsonl");
const spanLog = path.join(dir, "spans-a.jsonl");

let s3, s3Port, mock, a, b;

async function startS3(port = 0) {
  const server = new S3rver({ port, address: "127.0.0.1", silent: true, directory: path.join(dir, "s3"),
    configureBuckets: [{ name: BUCKET }] });
  const addr = await server.run();
  return { server, port: addr.port };
}

before(async () => {
  ({ server: s3, port: s3Port } = await startS3());
  mock = await startMock();
  const store = ["--store", `s3://${BUCKET}/${PREFIX}`, "--s3-endpoint", `http://127.0.0.1:${s3Port}`, "--store-timeout", "2s"];
  a = await startProxy(mock.url, [...store, "--record", recording, "--span-log", spanLog, "--store-slow-span", "0s"], ENV);
  b = await startProxy(mock.url, [...store, "--store-cache", path.join(dir, "cache-b"), "--store-cache-bytes", "64MiB"], ENV);
});

after(async () => {
  for (const p of [a?.process, b?.process, mock?.process]) if (p) await stopProcess(p);
  if (s3) await s3.close().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

function haystack(salt) {
  const lines = [];
  for (let i = 0; lines.join("\n").length < 120 * 1024; i++) {
    if (i === 1000) lines.push(`config line 1000: NEEDLE secret_port=48213 ${salt}`);
    lines.push(`${salt} config line ${i}: key_${i}=value_${(i * 31) % 977}`);
  }
  return lines.join("\n") + "\n";
}

// One request per API that carries `output` as a tool result; `ask` picks the mock's script.
const apis = {
  chat: {
    path: "/v1/chat/completions", headers: { authorization: "Bearer sk-fleet" },
    body: (ask, output) => ({ model: "gpt-4o", messages: [
      { role: "user", content: ask },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "cat", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: output }],
      tools: [{ type: "function", function: { name: "cat", parameters: { type: "object", properties: {} } } }] }),
    text: (j) => j.choices[0].message.content,
  },
  responses: {
    path: "/v1/responses", headers: { authorization: "Bearer sk-fleet" },
    body: (ask, output) => ({ model: "gpt-5", input: [
      { role: "user", content: ask },
      { type: "function_call", call_id: "c1", name: "cat", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output }],
      tools: [{ type: "function", name: "cat", parameters: { type: "object", properties: {} }, strict: false }] }),
    text: (j) => j.output.filter((o) => o.type === "message").flatMap((o) => o.content).map((c) => c.text).join(""),
  },
  messages: {
    path: "/v1/messages", headers: { "x-api-key": "sk-ant-fleet", "anthropic-version": "2023-06-01" },
    body: (ask, output) => ({ model: "claude-sonnet-4-5", max_tokens: 200, messages: [
      { role: "user", content: ask },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "cat", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: output }] }],
      tools: [{ name: "cat", input_schema: { type: "object", properties: {} } }] }),
    text: (j) => j.content.map((c) => c.text ?? "").join(""),
  },
  gemini: {
    path: "/v1beta/models/gemini-2.5-flash:generateContent", headers: { "x-goog-api-key": "gm-fleet" },
    body: (ask, output) => ({ contents: [
      { role: "user", parts: [{ text: ask }] },
      { role: "model", parts: [{ functionCall: { name: "cat", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { name: "cat", response: { result: output } } }] }],
      tools: [{ functionDeclarations: [{ name: "cat", parameters: { type: "object", properties: {} } }] }] }),
    text: (j) => j.candidates[0].content.parts.map((p) => p.text ?? "").join(""),
  },
};

async function send(replica, api, body) {
  const r = await fetch(replica.url + api.path, {
    method: "POST", headers: { "content-type": "application/json", ...api.headers },
    body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await r.text();
  assert.equal(r.status, 200, text.slice(0, 300));
  return JSON.parse(text);
}

// The recorded exchange whose request carried `marker`: what A forwarded upstream.
async function forwardedBy(marker) {
  return waitFor("the recording", () => {
    for (const rec of completeLines(recording).reverse()) {
      if (rec.request_body?.includes(marker) && rec.forwarded_body) return rec.forwarded_body;
    }
    return null;
  });
}

async function metric(replica, name, labels) {
  const text = await (await fetch(`${replica.adminUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.split(" ").pop());
  }
  return sum;
}

async function healthy(replica) {
  return (await fetch(`${replica.adminUrl}/healthz`)).status === 200;
}

const sha256 = (s) => createHash("sha256").update(s).digest("hex");

for (const [name, api] of Object.entries(apis)) {
  test(`${name}: offloaded through replica A, paged in through replica B from the bucket`, async () => {
    const output = haystack(`${name}-salt`);
    const direct = await send(a, api, api.body("find the needle", output));
    assert.equal(api.text(direct), `found: 1001: config line 1000: NEEDLE secret_port=48213 ${name}-salt`);

    const forwarded = await forwardedBy(`${name}-salt config line 0:`);
    assert.ok(!forwarded.includes("NEEDLE"), "A forwarded the bytes, not a reference");
    assert.ok(forwarded.includes('read_blob(\\"'));
    const pageInsBefore = await metric(b, "gistproxy_store_operations_total", { op: "get", result: "ok" });

    const viaB = await send(b, api, forwarded);  // B never saw the output
    assert.equal(api.text(viaB), `found: 1001: config line 1000: NEEDLE secret_port=48213 ${name}-salt`);
    assert.ok(await metric(b, "gistproxy_store_operations_total", { op: "get", result: "ok" }) > pageInsBefore);
  });
}

test("S3 calls slower than --store-slow-span (0 here: all) are store_call spans of the request they served", async () => {
  const spans = await waitFor("store_call spans", () => {
    const all = completeLines(spanLog);
    return all.some((s) => s.name === "store_call") ? all : null;
  });
  const requests = new Map(spans.filter((s) => s.name === "gistproxy.request").map((s) => [s.spanId, s]));
  const calls = spans.filter((s) => s.name === "store_call");
  const attr = (s, k) => s.attributes[k];
  const put = calls.find((s) => attr(s, "gistproxy.store.op") === "put");
  assert.ok(put, "a put span");
  assert.equal(attr(put, "gistproxy.store.result"), "ok");
  const parent = requests.get(put.parentSpanId);
  assert.ok(parent, "the put's parent is a request span");
  assert.equal(parent.traceId, put.traceId);
  assert.ok(calls.some((s) => attr(s, "gistproxy.store.op") === "get"), "page-ins' gets too");
});

test("the object is PREFIX/<tenant>/<sha256>, holds the gistproxy blob format, and `blob get` reads it", async () => {
  const output = haystack("layout");
  await send(a, apis.chat, apis.chat.body("find the needle", output));
  const tenant = sha256("Bearer sk-fleet").slice(0, 16);
  const key = `${PREFIX}/${tenant}/${sha256(output)}`;
  const obj = await fetch(`http://127.0.0.1:${s3Port}/${BUCKET}/${key}`);
  assert.equal(obj.status, 200);
  const bytes = Buffer.from(await obj.arrayBuffer());
  assert.equal(bytes.subarray(0, 5).toString(), "GPB1 ");
  assert.equal(obj.headers.get("x-amz-meta-gistproxy-size"), String(Buffer.byteLength(output)));

  const { stdout } = await promisify(execFile)(`${BUILD}/gistproxy`, ["blob", "get", sha256(output).slice(0, 20),
    "--store", `s3://${BUCKET}/${PREFIX}`, "--s3-endpoint", `http://127.0.0.1:${s3Port}`, "--api-key", "sk-fleet"],
  { env: { ...process.env, ...ENV }, maxBuffer: 1 << 24 });
  assert.equal(stdout, output);
});

test("a tampered object is an integrity failure: the page-in refuses it and `blob verify` names it", async () => {
  const output = haystack("tamper");
  await send(a, apis.chat, apis.chat.body("find the needle", output));
  const forwarded = await forwardedBy("tamper config line 0:");
  const key = `${PREFIX}/${sha256("Bearer sk-fleet").slice(0, 16)}/${sha256(output)}`;
  const url = `http://127.0.0.1:${s3Port}/${BUCKET}/${key}`;
  const original = Buffer.from(await (await fetch(url)).arrayBuffer());
  const tampered = Buffer.from(original);
  tampered[tampered.length - 10] ^= 0x55;  // inside the zstd frame
  assert.equal((await fetch(url, { method: "PUT", body: tampered })).status, 200);  // s3rver takes unsigned writes

  const failuresBefore = await metric(b, "gistproxy_integrity_failures_total", {});
  const viaB = await send(b, apis.chat, forwarded);
  assert.ok(!apis.chat.text(viaB).includes("NEEDLE"), "tampered bytes must never reach the model");
  assert.ok(await metric(b, "gistproxy_integrity_failures_total", {}) > failuresBefore);

  const verify = await promisify(execFile)(`${BUILD}/gistproxy`, ["blob", "verify", "--store", `s3://${BUCKET}/${PREFIX}`,
    "--s3-endpoint", `http://127.0.0.1:${s3Port}`], { env: { ...process.env, ...ENV } }).catch((e) => e);
  assert.equal(verify.code, 1);
  assert.match(verify.stdout, new RegExp(`corrupt .*${sha256(output)}`));
  assert.equal((await fetch(url, { method: "PUT", body: original })).status, 200);
});

test("S3 down: offloads forward the originals, page-ins give the model a tool error, both counted, replicas stay up", async () => {
  const before = haystack("before-outage");
  await send(a, apis.chat, apis.chat.body("find the needle", before));
  const forwarded = await forwardedBy("before-outage config line 0:");
  await s3.close();
  // S3 comes back whatever this test finds: the tests after it need the bucket.
  let restarted = false;
  try {
    const failOpenBefore = await metric(a, "gistproxy_rewrite_failures_total", { reason: "store_error" });
    const during = haystack("during-outage");
    const answer = await send(a, apis.chat, apis.chat.body("plain question", during));
    assert.ok(answer.choices[0].message.content.length > 0);
    assert.ok(await metric(a, "gistproxy_rewrite_failures_total", { reason: "store_error" }) > failOpenBefore);
    assert.ok(await metric(a, "gistproxy_store_operations_total", { result: "unreachable" }) > 0);

    const pageErrorsBefore = await metric(b, "gistproxy_page_ins_total", { result: "io" });
    const viaB = await send(b, apis.chat, forwarded);
    assert.ok(!apis.chat.text(viaB).includes("NEEDLE"));
    assert.ok(await metric(b, "gistproxy_page_ins_total", { result: "io" }) > pageErrorsBefore);
    assert.ok(await healthy(a));
    assert.ok(await healthy(b));
    // What B paged in before the outage is in its --store-cache: still served, re-hashed.
    const cachedForwarded = await forwardedBy("chat-salt config line 0:");
    assert.equal(apis.chat.text(await send(b, apis.chat, cachedForwarded)),
      "found: 1001: config line 1000: NEEDLE secret_port=48213 chat-salt");

    // Back on the same port: offloading resumes without a restart.
    ({ server: s3 } = await startS3(s3Port));
    restarted = true;
    const after = haystack("after-outage");
    const direct = await send(a, apis.chat, apis.chat.body("find the needle", after));
    assert.equal(apis.chat.text(direct), "found: 1001: config line 1000: NEEDLE secret_port=48213 after-outage");
  } finally {
    if (!restarted) ({ server: s3 } = await startS3(s3Port));
  }
});

test("an S3 that accepts and never answers: serve starts (with a warning) and offloads fail open within --store-timeout", async () => {
  const { createServer } = await import("node:net");
  const sockets = [];
  const hanging = createServer((sock) => sockets.push(sock));
  await new Promise((r) => hanging.listen(0, "127.0.0.1", r));
  const c = await startProxy(mock.url, ["--store", `s3://${BUCKET}/hang`, "--s3-endpoint",
    `http://127.0.0.1:${hanging.address().port}`, "--store-timeout", "500ms"], ENV);
  try {
    const started = Date.now();
    const answer = await send(c, apis.chat, apis.chat.body("plain question", haystack("hanging-store")));
    const took = Date.now() - started;
    assert.ok(answer.choices[0].message.content.length > 0);
    assert.ok(took < 3000, `answered in ${took} ms`);  // one bounded wait, not a hang
    assert.ok(await metric(c, "gistproxy_rewrite_failures_total", { reason: "store_error" }) > 0);
    assert.ok(await metric(c, "gistproxy_store_operations_total", { op: "put", result: "unreachable" }) > 0);
    assert.ok(await healthy(c));
  } finally {
    await stopProcess(c.process);
    for (const sock of sockets) sock.destroy();
    hanging.close();
  }
});

test("budget mode: replicas on one bucket make the same decisions, so a conversation's prefix survives a switch", async () => {
  const x1 = Array.from({ length: 200 }, (_, i) => `old output line ${i} ${"o".repeat(20)}`).join("\n");
  const x2 = Array.from({ length: 60 }, (_, i) => `recent line ${i} ${"r".repeat(20)}`).join("\n");
  const call = (id) => ({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "cat", arguments: "{}" } }] });
  const turn1 = [{ role: "user", content: "budget conversation" }, call("c1"), { role: "tool", tool_call_id: "c1", content: x1 },
    call("c2"), { role: "tool", tool_call_id: "c2", content: x2 }];
  const turn2 = [...turn1, { role: "assistant", content: "ok" }, { role: "user", content: "next ".repeat(640) }];
  const body = (messages) => ({ model: "gpt-4o", messages, tools: [{ type: "function", function: { name: "cat", parameters: { type: "object" } } }] });
  // Budget mode's arithmetic (rewrite/offload/engine.cpp): tokens ~ bytes / 4,
  // an eviction saves an output's tokens less a quarter-size preview and ~80.
  const tokens = (o) => Math.ceil(JSON.stringify(o).length / 4);
  const saving = (x) => { const t = Math.ceil((JSON.stringify(x).length - 2) / 4); return t - (Math.min(1000, Math.floor(t / 4)) + 80); };
  const budgetTokens = tokens(body(turn1)) - 1, floor = Math.floor(budgetTokens * 6 / 10);
  const t2 = tokens(body(turn2));
  assert.ok(tokens(body(turn1)) - saving(x1) <= floor, "turn 1 evicts only the old output");
  assert.ok(t2 - saving(x1) <= budgetTokens && t2 - saving(x1) > floor, "turn 2 fits only if the old output stays offloaded");

  const budget = ["--context-budget-tokens", String(budgetTokens), "--threshold-tokens", "100000"];
  const recD = path.join(dir, "d.jsonl"), recE = path.join(dir, "e.jsonl"), recF = path.join(dir, "f.jsonl");
  const shared = ["--store", `s3://${BUCKET}/budget`, "--s3-endpoint", `http://127.0.0.1:${s3Port}`];
  const d = await startProxy(mock.url, [...shared, ...budget, "--record", recD], ENV);
  const e = await startProxy(mock.url, [...shared, ...budget, "--record", recE], ENV);
  const f = await startProxy(mock.url, ["--store", path.join(dir, "alone"), ...budget, "--record", recF], ENV);
  try {
    const forwarded = async (rec) => waitFor("a recorded exchange", () => {
      const last = completeLines(rec).pop();
      return last ? JSON.parse(last.forwarded_body ?? "null") : null;
    });
    await send(d, apis.chat, body(turn1));            // turn 1 on replica D: the old output is evicted
    const first = await forwarded(recD);
    assert.ok(first.messages[2].content.includes("[gistproxy:"));
    assert.equal(first.messages[4].content, x2);
    await send(e, apis.chat, body(turn2));            // turn 2 lands on replica E, same bucket
    const second = await forwarded(recE);
    assert.deepEqual(second.messages.slice(0, 5), first.messages, "the forwarded prefix is unchanged");
    assert.deepEqual(second.tools, first.tools);

    await send(f, apis.chat, body(turn2));            // a replica with its own store decides differently
    const alone = await forwarded(recF);
    assert.ok(alone.messages[4].content.includes("[gistproxy:"), "without the shared store the recent output goes too");
  } finally {
    for (const p of [d, e, f]) await stopProcess(p.process);
  }
});

// s3rver reports a file's mtime as the object's Last-Modified: the test sets
// the ages it asserts on, so neither a slow machine nor a wall-clock step
// (a VM resumed from a snapshot) decides what counts as expired.
function s3rverObjects(prefix) {
  const root = path.join(dir, "s3", BUCKET, prefix);
  return readdirSync(root, { recursive: true }).filter((f) => f.endsWith("._S3rver_object")).map((f) => path.join(root, f));
}
function age(files, days) {
  const when = new Date(Date.now() - days * 86400 * 1000);
  for (const f of files) utimesSync(f, when, when);
}

test("blob gc deletes objects older than --blob-ttl by Last-Modified, bounded by --max", async () => {
  const run = async (args) => (await promisify(execFile)(`${BUILD}/gistproxy`, ["blob", "gc", "--store", `s3://${BUCKET}/${PREFIX}`,
    "--s3-endpoint", `http://127.0.0.1:${s3Port}`, ...args], { env: { ...process.env, ...ENV } })).stdout;
  const objects = s3rverObjects(PREFIX);
  assert.ok(objects.length >= 3, `the earlier tests stored blobs under ${PREFIX}`);
  age(objects, 0);
  assert.match(await run(["--blob-ttl", "7d"]), /^0 expired blobs removed/);
  age(objects.slice(0, 2), 8);
  assert.match(await run(["--blob-ttl", "7d", "--max", "1"]), /^1 expired blobs removed/);
  assert.equal(s3rverObjects(PREFIX).length, objects.length - 1, "--max bounds the removals");
  assert.match(await run(["--blob-ttl", "7d"]), /^1 expired blobs removed/);
  assert.match(await run(["--blob-ttl", "7d"]), /^0 expired blobs removed/);
  const left = s3rverObjects(PREFIX);
  assert.deepEqual(left.sort(), objects.slice(2).sort(), "only the two old objects went");
  age(left.slice(0, 1), 1);
  assert.match(await run(["--blob-ttl", "12h"]), /^1 expired blobs removed/);
});

test("retries: 5xx and SlowDown are retried with backoff, another 4xx never", async () => {
  const { createServer } = await import("node:http");
  let lists = 0, failFirst = 0, status = 503;
  const flaky = createServer((req, res) => {
    if (req.method === "HEAD") return res.writeHead(200).end();
    if (++lists <= failFirst) {
      res.writeHead(status, { "content-type": "application/xml" });
      return res.end(`<Error><Code>${status === 503 ? "SlowDown" : "InvalidArgument"}</Code></Error>`);
    }
    res.writeHead(200, { "content-type": "application/xml" });
    res.end("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
  });
  await new Promise((r) => flaky.listen(0, "127.0.0.1", r));
  const verify = () => promisify(execFile)(`${BUILD}/gistproxy`, ["blob", "verify", "--store", `s3://${BUCKET}/x`,
    "--s3-endpoint", `http://127.0.0.1:${flaky.address().port}`], { env: { ...process.env, ...ENV } }).catch((e) => e);
  try {
    failFirst = 2;  // two SlowDowns, then the listing
    const ok = await verify();
    assert.match(ok.stdout, /^0 blobs checked, 0 corrupt/);
    assert.equal(lists, 3);
    lists = 0, failFirst = 1, status = 400;  // a client error is final
    const refused = await verify();
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /listing failed: S3 answered 400 InvalidArgument/);
    assert.equal(lists, 1);
  } finally {
    flaky.close();
  }
});

test("a wrong secret stops serve at startup with a message that says so", async () => {
  // s3rver accepts any signature, so an endpoint that answers as S3 does to a
  // bad signature (403 on every request) stands in for it.
  const { createServer } = await import("node:http");
  const refusing = createServer((req, res) => {
    res.writeHead(403, { "content-type": "application/xml" });
    res.end(req.method === "HEAD" ? undefined
      : "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message></Error>");
  });
  await new Promise((r) => refusing.listen(0, "127.0.0.1", r));
  const port = refusing.address().port;
  const run = await promisify(execFile)(`${BUILD}/gistproxy`, ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
    "--upstream", mock.url, "--store", `s3://${BUCKET}/x`, "--s3-endpoint", `http://127.0.0.1:${port}`],
  { env: { ...process.env, ...ENV, AWS_SECRET_ACCESS_KEY: "wrong" }, timeout: 10000 }).catch((e) => e);
  refusing.close();
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /403.*credentials are wrong/);
});
