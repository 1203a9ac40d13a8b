// Node's built-in http2 client, as a shared gateway's clients use it: ONE h2c
// connection (prior knowledge) to gistproxy carries 100 concurrent streams:
// JSON requests whose large tool output is offloaded and paged back in,
// plain JSON requests whose output is only offloaded, SSE streams whose
// model calls read_blob (the page-in hop runs inside the proxy and is
// spliced into the stream), one stream whose upstream stalls in its page-in
// hop and one whose client stops reading. Every other stream completes with
// its own answer while those two are still pending.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import http2 from "node:http2";
import { startStack } from "./harness.mjs";

let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack.stop(); });

const PAGE_INS = 60, OFFLOADS = 20, STREAMS = 18;  // with the two stalled ones: 100 streams

// A config dump of ~40 KB (far above the offload threshold) whose NEEDLE line
// names the stream: an answer carrying another stream's secret is a mix-up.
function haystack(secret) {
  const lines = [];
  for (let i = 0; lines.length < 1200; i++) {
    if (i === 700) lines.push(`config line 700: NEEDLE secret_port=${secret}`);
    lines.push(`config line ${i}: key_${i}=value_${(i * 31) % 977}`);
  }
  return lines.join("\n") + "\n";
}
const expected = (secret) => `found: 701: config line 700: NEEDLE secret_port=${secret}`;

function chatRequest(question, secret, stream) {
  return JSON.stringify({
    model: "gpt-4o",
    stream,
    messages: [
      { role: "user", content: question },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "cat", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: haystack(secret) },
    ],
    tools: [{ type: "function", function: { name: "cat", parameters: { type: "object", properties: {} } } }],
  });
}

// Opens one stream; `done` settles with its status, body and RST code once it ends.
function open(session, method, path, body) {
  const req = session.request({ ":method": method, ":path": path, "content-type": "application/json",
    authorization: "Bearer sk-test" }, { endStream: body === undefined });
  if (body !== undefined) req.end(body);
  const state = { status: 0, body: "", ended: false, req };
  state.done = new Promise((resolve, reject) => {
    req.on("response", (h) => { state.status = h[":status"]; });
    req.setEncoding("utf8");
    req.on("data", (d) => { state.body += d; });
    req.on("end", () => { state.ended = true; });
    req.on("close", () => resolve({ status: state.status, body: state.body, rstCode: req.rstCode, ended: state.ended }));
    req.on("error", reject);
  });
  return state;
}

function sseText(body) {
  let text = "";
  for (const line of body.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const chunk = JSON.parse(line.slice(6));
    text += chunk.choices?.[0]?.delta?.content ?? "";
  }
  return text;
}

// A metric's value summed over its series.
async function metric(name) {
  const text = await (await fetch(`${stack.adminUrl}/metrics`)).text();
  return text.split("\n").filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
}

test("one h2c connection, 100 streams: offloads, page-ins and SSE splices complete beside two stalled streams", async () => {
  const session = http2.connect(stack.proxyUrl);
  session.on("error", () => {});
  const settings = await new Promise((resolve) => session.once("remoteSettings", resolve));
  assert.ok(settings.maxConcurrentStreams >= 100, `the proxy allows ${settings.maxConcurrentStreams} streams`);

  // The upstream stalls: the page-in hop of this stream never answers.
  const upstreamStalled = open(session, "POST", "/v1/chat/completions", chatRequest("hang second hop", 1, true));
  // The client stops reading: 400 KB of events, far more than the stream's window.
  const clientStalled = open(session, "GET", "/sse?events=400&size=1000&delay_ms=0");
  clientStalled.req.pause();

  const jobs = [];
  for (let i = 0; i < PAGE_INS; i++) {
    const secret = 10000 + i;
    const s = open(session, "POST", "/v1/chat/completions", chatRequest("find the needle", secret, false));
    jobs.push(s.done.then((r) => {
      assert.equal(r.status, 200);
      const j = JSON.parse(r.body);
      assert.equal(j.choices[0].message.content, expected(secret));
      assert.ok(!r.body.includes("read_blob"));
    }));
  }
  for (let i = 0; i < OFFLOADS; i++) {
    const s = open(session, "POST", "/v1/chat/completions", chatRequest(`say hello ${i}`, 20000 + i, false));
    jobs.push(s.done.then((r) => {
      assert.equal(r.status, 200);
      assert.equal(JSON.parse(r.body).choices[0].message.content, "Hello from the mock.");
    }));
  }
  for (let i = 0; i < STREAMS; i++) {
    const secret = 30000 + i;
    const s = open(session, "POST", "/v1/chat/completions", chatRequest("find the needle", secret, true));
    jobs.push(s.done.then((r) => {
      assert.equal(r.status, 200);
      assert.equal(r.rstCode, http2.constants.NGHTTP2_NO_ERROR);
      assert.ok(r.body.endsWith("data: [DONE]\n\n"));
      assert.ok(!r.body.includes("read_blob"));
      assert.equal(sseText(r.body), expected(secret));
    }));
  }
  await Promise.all(jobs);

  // Both stalled streams are still open: nothing the others did ended them.
  assert.equal(upstreamStalled.ended, false);
  assert.equal(upstreamStalled.req.closed, false);
  assert.equal(clientStalled.ended, false);
  assert.equal(clientStalled.req.closed, false);
  // The paused stream holds what its window let through (Node's default
  // 64 KB), not the 400 KB: the proxy keeps the rest back, that stream alone.
  assert.ok(clientStalled.req.readableLength < 200 * 1000, `${clientStalled.req.readableLength} bytes arrived`);
  // Every large output was offloaded (the stalled page-in's first hop too);
  // every page-in hop of the 78 answered ones ran inside the proxy.
  assert.equal(await metric("gistproxy_h2_streams_total"), 100);
  assert.ok(await metric("gistproxy_offloads_total") >= PAGE_INS + OFFLOADS + STREAMS + 1);

  // The stream whose client stopped reading resumes and completes whole.
  clientStalled.req.resume();
  const resumed = await clientStalled.done;
  assert.equal(resumed.status, 200);
  assert.equal(resumed.rstCode, http2.constants.NGHTTP2_NO_ERROR);
  assert.equal(resumed.body.split("event: tick\n").length - 1, 400);
  // The one whose upstream stalls is cancelled by the client; the connection serves on.
  upstreamStalled.req.close(http2.constants.NGHTTP2_CANCEL);
  await upstreamStalled.done;
  const after = open(session, "POST", "/v1/chat/completions", chatRequest("find the needle", 40000, false));
  assert.equal(JSON.parse((await after.done).body).choices[0].message.content, expected(40000));
  session.close();
});
