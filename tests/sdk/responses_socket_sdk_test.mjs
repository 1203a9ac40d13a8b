// The Responses API over WebSocket through gistproxy, with the real clients:
// the openai SDK's ResponsesWS (its WebSocket mode) against the same cases
// the HTTP Responses stream passes, and Codex CLI 0.171 at its defaults
// (the built-in provider, openai_base_url), whose default transport is the
// socket. The mock upstream speaks WebSocket too, so both legs are sockets.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { completeLines, expectedNeedle, haystack, startMock, startProxy, stopProcess, waitFor } from "./harness.mjs";

const dir = mkdtempSync(join(tmpdir(), "gistproxy-socket-"));
const recording = join(dir, "record.jsonl");
let mock, proxy;
before(async () => {
  mock = await startMock();
  proxy = await startProxy(mock.url, ["--record", recording, "--max-body", "1MiB"]);
});
after(async () => {
  for (const p of [proxy?.process, mock?.process]) if (p) await stopProcess(p);
  rmSync(dir, { recursive: true, force: true });
});

const expected = expectedNeedle;
const request = {
  model: "gpt-5",
  input: [
    { role: "user", content: "find the needle" },
    { type: "function_call", call_id: "c1", name: "cat", arguments: "{}" },
    { type: "function_call_output", call_id: "c1", output: haystack() },
  ],
  tools: [{ type: "function", name: "cat", parameters: { type: "object", properties: {} }, strict: false }],
};

const client = () => new OpenAI({ apiKey: "sk-test", baseURL: `${proxy.url}/v1`, maxRetries: 0 });

// One response over a fresh ResponsesWS: every event until the response ends.
function socketResponse(body, { raw, url } = {}) {
  return new Promise((resolve, reject) => {
    const ws = new ResponsesWS(url ? new OpenAI({ apiKey: "sk-test", baseURL: `${url}/v1`, maxRetries: 0 }) : client());
    const events = [];
    const timer = setTimeout(() => { ws.close(); reject(new Error("no end within 20 s")); }, 20000);
    ws.on("event", (e) => {
      events.push(e);
      if (["response.completed", "response.failed", "response.incomplete", "error"].includes(e.type)) {
        clearTimeout(timer);
        ws.close();
        resolve({ events });
      }
    });
    ws.on("error", () => {});  // an error event is also an event (above); a socket error ends below
    ws.socket.on("close", (code) => { clearTimeout(timer); resolve({ events, closed: code }); });
    ws.socket.on("open", () => (raw ? ws.socket.send(raw) : ws.send({ type: "response.create", ...body })));
  });
}

// What is equivalent between two deliveries of one answer: the events'
// types in order and the text, without the ids each leg names.
function shape(events) {
  return { types: events.map((e) => e.type), text: events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("") };
}

async function metric(name) {
  const body = await (await fetch(`${proxy.adminUrl}/metrics`)).text();
  return [...body.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, "gm"))].reduce((s, m) => s + Number(m[2]), 0);
}

test("openai ResponsesWS: the needle paged in inside the socket, events equivalent to the HTTP stream, no read_blob", async () => {
  const overSocket = await socketResponse(request);
  const done = overSocket.events.at(-1);
  assert.equal(done.type, "response.completed");
  assert.ok(!JSON.stringify(overSocket.events).includes("read_blob"), "the client never sees read_blob");
  const message = done.response.output.find((item) => item.type === "message");
  assert.equal(message.content[0].text, expected);

  const http = [];
  const stream = client().responses.stream(request);
  stream.on("event", (e) => http.push(e));
  await stream.finalResponse();
  assert.deepEqual(shape(overSocket.events), shape(http));
  assert.equal(shape(overSocket.events).text, expected);
});

test("openai ResponsesWS: offload and paging counted as over HTTP (offloads, page-ins, churn)", async () => {
  const before = { offloaded: await metric("gistproxy_offloaded_bytes_total"), pageIns: await metric("gistproxy_page_ins_total"),
                   churn: await metric("gistproxy_paging_churn_total") };
  const overSocket = await socketResponse(request);
  assert.equal(overSocket.events.at(-1).type, "response.completed");
  const afterSocket = { offloaded: await metric("gistproxy_offloaded_bytes_total"), pageIns: await metric("gistproxy_page_ins_total"),
                        churn: await metric("gistproxy_paging_churn_total") };
  await client().responses.stream(request).finalResponse();
  const afterHttp = { offloaded: await metric("gistproxy_offloaded_bytes_total"), pageIns: await metric("gistproxy_page_ins_total"),
                      churn: await metric("gistproxy_paging_churn_total") };
  const socketDelta = Object.fromEntries(Object.keys(before).map((k) => [k, afterSocket[k] - before[k]]));
  const httpDelta = Object.fromEntries(Object.keys(before).map((k) => [k, afterHttp[k] - afterSocket[k]]));
  assert.ok(socketDelta.pageIns >= 1, JSON.stringify(socketDelta));
  assert.deepEqual(socketDelta, httpDelta);
});

test("openai ResponsesWS: the turn memory forwards the same reference for the same output, turn after turn", async () => {
  const own = completeLines(recording).filter((r) => r.protocol === "WebSocket" && r.forwarded_body).length;
  const first = await socketResponse(request);
  const second = await socketResponse({ ...request, input: [...request.input, { role: "user", content: "again" }] });
  assert.equal(first.events.at(-1).type, "response.completed");
  assert.equal(second.events.at(-1).type, "response.completed");
  // The recording is written after the client has its answer: wait for both turns.
  const records = await waitFor("both turns recorded", () => {
    const socketRecords = completeLines(recording).filter((r) => r.protocol === "WebSocket" && r.forwarded_body);
    return socketRecords.length >= own + 2 && socketRecords;
  });
  const refs = records.slice(-2).map((r) => r.forwarded_body.match(/read_blob\(\\"([0-9a-f]{16,})/)?.[1]);
  assert.ok(refs[0], "the output went upstream as a reference");
  assert.equal(refs[0], refs[1]);
  for (const r of records.slice(-2)) assert.ok(!r.forwarded_body.includes("NEEDLE secret_port"));
});

test("openai ResponsesWS: hostile messages are bounded (not JSON: error event; too big: 1009)", async () => {
  const notJson = await socketResponse(null, { raw: "not json" });
  assert.equal(notJson.events.at(-1)?.type, "error");
  assert.equal(notJson.events.at(-1).status, 400);
  // A proxy with a small bound, so the whole message is in the socket's
  // buffers when the proxy refuses it (a client still writing megabytes when
  // the proxy closes may see the reset, 1006, before the close frame).
  const small = await startProxy(mock.url, ["--max-body", "64KiB"]);
  try {
    const tooBig = await socketResponse(null, { url: small.url,
      raw: JSON.stringify({ type: "response.create", model: "gpt-5", input: "x".repeat(100 * 1024) }) });
    assert.equal(tooBig.closed, 1009);
  } finally {
    await stopProcess(small.process);
  }
});

// Codex CLI 0.171 at its defaults: the built-in OpenAI provider, pointed at
// gistproxy the documented way, speaks the socket; no HTTP fallback.
const codex = join(process.cwd(), "node_modules/.bin/codex");
test("codex 0.171 with openai_base_url: WebSocket on both legs, offloaded, paged in, no HTTP fallback",
  { skip: !existsSync(codex) && "codex is not installed (npm ci in the build's sdk folder installs it)" }, async () => {
    const work = join(dir, "codex-work");
    const home = join(dir, "codex-home");
    mkdirSync(work, { recursive: true });
    mkdirSync(join(home, ".codex"), { recursive: true });
    writeFileSync(join(work, "big.log"), haystack());
    const own = completeLines(recording).length;
    const plan = "agent runs: " + JSON.stringify([{ name: "exec_command", arguments: { cmd: "cat big.log", max_output_tokens: 100000 } },
      { name: "read_blob", arguments: { pattern: "NEEDLE" } }]);
    const r = await new Promise((resolve) => {
      const child = execFile(codex, ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", "gpt-5",
        "-c", "tool_output_token_limit=100000", "-c", `openai_base_url="${proxy.url}/v1"`, plan],
      { cwd: work, timeout: 100_000, maxBuffer: 16 << 20,
        env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: join(home, ".codex"), OPENAI_API_KEY: "sk-codex-socket" } },
      (error, stdout, stderr) => resolve({ status: error ? (error.code ?? 1) : 0, stdout, stderr }));
      child.stdin.end();
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /NEEDLE secret_port=48213/, r.stderr);
    // The recording is written after each answer: wait (bounded) for Codex's.
    const records = await waitFor("codex's page-in recorded", () => {
      const mine = completeLines(recording).slice(own);
      return mine.some((x) => (x.hops ?? 0) >= 1) && mine;
    });
    assert.ok(records.length >= 2, `records: ${records.length}`);
    assert.deepEqual([...new Set(records.map((x) => x.protocol))], ["WebSocket"], "zero HTTP fallbacks");
    assert.ok(records.some((x) => /read_blob\(\\"[0-9a-f]{16}/.test(x.forwarded_body ?? "")), "the shell output went upstream as a reference");
    assert.ok(records.some((x) => (x.hops ?? 0) >= 1), "read_blob was paged in inside the socket");
  });
