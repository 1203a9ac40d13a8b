// The AWS SDK's BedrockRuntimeClient at its defaults — its NodeHttp2Handler
// (HTTP/2 with prior knowledge to an http:// endpoint) and the client's own
// credentials — signs SigV4 over HTTP/2: SignedHeaders lists :authority, not
// host. Through gistproxy, against an HTTP/2 Bedrock stand-in that verifies
// every signature with the SDK's own signer (@smithy/signature-v4) over the
// pseudo-headers and fields it received, as Bedrock does: Converse,
// ConverseStream, InvokeModel and InvokeModelWithResponseStream verify and answer. (Over HTTP/1.1 the stand-in would see a
// Host and no :authority, and refuse.)
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import http2 from "node:http2";
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand, InvokeModelWithResponseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import { Sha256 } from "@aws-crypto/sha256-js";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { startProxy, stopProcess, waitFor } from "./harness.mjs";

const CLIENT_CREDS = { accessKeyId: "AKIDCLIENTH2", secretAccessKey: "client/h2+secret" };
const MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0";
let upstream, proxy;
const seen = [];  // { ok, why, signedHeaders, authority } per request the stand-in verified

async function verify(headers, body) {
  const auth = headers.authorization ?? "";
  const m = auth.match(/^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/bedrock\/aws4_request, SignedHeaders=([^,]+), Signature=[0-9a-f]{64}$/);
  if (!m || m[1] !== CLIENT_CREDS.accessKeyId) return { ok: false, why: "no SigV4 signature of the client's" };
  const [, , , region, signedList] = m;
  const signed = {};
  for (const name of signedList.split(";")) {
    if (headers[name] === undefined) return { ok: false, why: `${name} is signed but absent`, signedList };
    signed[name] = headers[name];
  }
  const url = new URL(headers[":path"], "http://placeholder");
  const query = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const d = headers["x-amz-date"].match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
  const signingDate = new Date(Date.UTC(+d[1], +d[2] - 1, +d[3], +d[4], +d[5], +d[6]));
  const signer = new SignatureV4({ credentials: CLIENT_CREDS, region, service: "bedrock", sha256: Sha256, applyChecksum: false });
  // The path as it arrived (still %-encoded once): smithy encodes it again, as Bedrock verifies it.
  const again = await signer.sign({ method: headers[":method"], protocol: "http:", hostname: "placeholder",
    path: url.pathname, query, headers: signed, body }, { signingDate });
  return { ok: again.headers.authorization === auth, why: "signature does not match", signedList };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const event = (type, payload) => codec.encode({
  headers: { ":event-type": { type: "string", value: type }, ":content-type": { type: "string", value: "application/json" },
    ":message-type": { type: "string", value: "event" } },
  body: fromUtf8(JSON.stringify(payload)) });
const usage = { inputTokens: 3, outputTokens: 4, totalTokens: 7 };

function answer(stream, path, check) {
  if (!check.ok) {
    stream.respond({ ":status": 403, "content-type": "application/json", "x-amzn-errortype": "InvalidSignatureException" });
    return stream.end(JSON.stringify({ message: `The request signature we calculated does not match: ${check.why}` }));
  }
  const claude = (text) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
  if (path.endsWith("/invoke-with-response-stream")) {
    stream.respond({ ":status": 200, "content-type": "application/vnd.amazon.eventstream" });
    for (const e of [claude("verified "), claude("over h2"), { type: "message_stop" }])
      stream.write(event("chunk", { bytes: Buffer.from(JSON.stringify(e)).toString("base64") }));
    return stream.end();
  }
  if (path.endsWith("/invoke")) {
    stream.respond({ ":status": 200, "content-type": "application/json" });
    return stream.end(JSON.stringify({ type: "message", role: "assistant", content: [{ type: "text", text: "verified over h2" }],
      stop_reason: "end_turn", usage: { input_tokens: 3, output_tokens: 4 } }));
  }
  if (path.endsWith("/converse-stream")) {
    stream.respond({ ":status": 200, "content-type": "application/vnd.amazon.eventstream" });
    for (const e of [event("messageStart", { role: "assistant" }),
      event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "verified " } }),
      event("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "over h2" } }),
      event("contentBlockStop", { contentBlockIndex: 0 }),
      event("messageStop", { stopReason: "end_turn" }),
      event("metadata", { usage, metrics: { latencyMs: 1 } })]) stream.write(e);
    return stream.end();
  }
  stream.respond({ ":status": 200, "content-type": "application/json" });
  stream.end(JSON.stringify({ output: { message: { role: "assistant", content: [{ text: "verified over h2" }] } },
    stopReason: "end_turn", usage, metrics: { latencyMs: 1 } }));
}

before(async () => {
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    const chunks = [];
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", async () => {
      const check = await verify(headers, Buffer.concat(chunks)).catch((e) => ({ ok: false, why: String(e) }));
      seen.push({ ...check, authority: headers[":authority"], host: headers.host });
      answer(stream, headers[":path"], check);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  upstream = server;
  proxy = await startProxy(`http://127.0.0.1:${server.address().port}`);
});
after(async () => {
  if (proxy) await stopProcess(proxy.process);
  upstream?.close();
});

const input = () => ({ modelId: MODEL, messages: [{ role: "user", content: [{ text: "hello" }] }], inferenceConfig: { maxTokens: 50 } });

test("AWS SDK, default handler and the client's own credentials: Converse, ConverseStream, InvokeModel and its stream verify over HTTP/2", async () => {
  // Nothing but an endpoint and credentials: the SDK's default request handler (HTTP/2).
  const client = new BedrockRuntimeClient({ region: "us-east-1", endpoint: proxy.url, credentials: CLIENT_CREDS, maxAttempts: 1 });
  try {
    const r = await client.send(new ConverseCommand(input()));
    assert.equal(r.output.message.content[0].text, "verified over h2");
    const s = await client.send(new ConverseStreamCommand(input()));
    let text = "";
    const kinds = [];
    for await (const e of s.stream) {
      kinds.push(Object.keys(e)[0]);
      if (e.contentBlockDelta?.delta?.text) text += e.contentBlockDelta.delta.text;
    }
    assert.equal(text, "verified over h2");
    assert.equal(kinds.at(-1), "metadata");
    const body = JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 50, messages: [{ role: "user", content: "hello" }] });
    const i = await client.send(new InvokeModelCommand({ modelId: MODEL, body, contentType: "application/json" }));
    assert.equal(JSON.parse(new TextDecoder().decode(i.body)).content[0].text, "verified over h2");
    const is = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, body, contentType: "application/json" }));
    let streamed = "";
    for await (const e of is.body) {
      const chunk = JSON.parse(new TextDecoder().decode(e.chunk.bytes));
      if (chunk.type === "content_block_delta") streamed += chunk.delta.text;
    }
    assert.equal(streamed, "verified over h2");
  } finally {
    client.destroy();
  }
  assert.equal(seen.length, 4);
  for (const s of seen) {
    assert.ok(s.ok, s.why);
    assert.match(s.signedList, /^:authority;/);  // the SDK signed the pseudo-header, as the issue says
    assert.equal(s.authority, new URL(proxy.url).host);  // the client's :authority, byte for byte
    assert.equal(s.host, undefined);
  }
  // h2 to the upstream is visible in the access log, one line per request
  // (written once the answer is relayed: waited for, bounded).
  const lines = await waitFor("four access lines", () => {
    const access = proxy.logged("access").filter((r) => r.api?.startsWith("bedrock"));
    return access.length >= 4 && access;
  });
  assert.deepEqual(lines.map((r) => [r.protocol, r.upstream_protocol]), Array(4).fill(["HTTP/2", "HTTP/2"]));
});
