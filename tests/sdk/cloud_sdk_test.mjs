// The clouds' own SDKs through gistproxy, against the mock upstream that
// answers their paths as the clouds do: openai's AzureOpenAI, Anthropic's
// Vertex and Bedrock SDKs, the AWS SDK's BedrockRuntimeClient (whose
// event-stream parser checks every CRC) and @google/genai with vertexai. Each
// asks a question buried in an offloaded 200 KB tool output: gistproxy
// answers the model's read_blob call inside the proxy, and the SDK sees one
// coherent answer that never mentions read_blob, streamed or not.
// Bedrock's signing modes: an API key is forwarded; with --sign-bedrock a
// request without credentials is signed by gistproxy, and a gate in front of
// the mock verifies every signature with the AWS SDK's own signer
// (@smithy/signature-v4), as Bedrock would; a request the client signed
// itself reaches Bedrock byte for byte (not offloaded).
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { createServer, request as httpRequest } from "node:http";
import { AzureOpenAI } from "openai";
import { AnthropicVertex } from "@anthropic-ai/vertex-sdk";
import { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk";
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand, InvokeModelWithResponseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { GoogleGenAI } from "@google/genai";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { SignatureV4 } from "@smithy/signature-v4";
import { Sha256 } from "@aws-crypto/sha256-js";
import { expectedNeedle, haystack, startMock, startProxy, stopProcess } from "./harness.mjs";

const PROXY_CREDS = { accessKeyId: "AKIDGISTPROXY", secretAccessKey: "gistproxy/secret+key" };
let mock, proxy, signingProxy, gate;
const gateSeen = [];  // { ok, authorization, path } for every request the gate verified

// A SigV4-verifying gate in front of the mock: each request's signature is
// recomputed with smithy over what arrived, then it is forwarded or refused (403).
async function startGate(upstreamUrl) {
  const target = new URL(upstreamUrl);
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      const ok = await verify(req, body).catch(() => false);
      gateSeen.push({ ok, authorization: req.headers.authorization, path: req.url });
      if (!ok) {
        res.writeHead(403, { "content-type": "application/json" });
        return res.end(JSON.stringify({ message: "The request signature we calculated does not match the signature you provided." }));
      }
      const forward = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url,
        headers: { ...req.headers, host: target.host } }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
      forward.end(body);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

async function verify(req, body) {
  const auth = req.headers.authorization ?? "";
  const m = auth.match(/^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/bedrock\/aws4_request, SignedHeaders=([^,]+), Signature=[0-9a-f]{64}$/);
  if (!m || m[1] !== PROXY_CREDS.accessKeyId) return false;
  const [, , , region, signedList] = m;
  const url = new URL(req.url, `http://${req.headers.host}`);
  const headers = {};
  for (const h of signedList.split(";")) headers[h] = req.headers[h];
  const query = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const d = req.headers["x-amz-date"].match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
  const signingDate = new Date(Date.UTC(+d[1], +d[2] - 1, +d[3], +d[4], +d[5], +d[6]));
  // As AWS verifies: over exactly the headers the request says it signed
  // (applyChecksum off: smithy would otherwise add x-amz-content-sha256).
  const signer = new SignatureV4({ credentials: PROXY_CREDS, region, service: "bedrock", sha256: Sha256, applyChecksum: false });
  // The path as it arrived (still %-encoded once): smithy encodes it again, as Bedrock verifies it.
  const signed = await signer.sign({ method: req.method, protocol: "http:", hostname: url.hostname,
    path: url.pathname, query, headers, body }, { signingDate });
  return signed.headers.authorization === auth;
}

before(async () => {
  mock = await startMock();
  proxy = await startProxy(mock.url);
  gate = await startGate(mock.url);
  signingProxy = await startProxy(gate.url, ["--sign-bedrock", "on", "--bedrock-region", "us-west-2"], {
    AWS_ACCESS_KEY_ID: PROXY_CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: PROXY_CREDS.secretAccessKey });
});
after(async () => {
  for (const p of [proxy?.process, signingProxy?.process, mock?.process]) if (p) await stopProcess(p);
  gate?.server.close();
});

const expected = expectedNeedle;
const output = haystack();

const chatMessages = [
  { role: "user", content: "find the needle" },
  { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "cat", arguments: "{}" } }] },
  { role: "tool", tool_call_id: "c1", content: output },
];
const chatTools = [{ type: "function", function: { name: "cat", parameters: { type: "object", properties: {} } } }];
const responsesInput = [
  { role: "user", content: "find the needle" },
  { type: "function_call", call_id: "c1", name: "cat", arguments: "{}" },
  { type: "function_call_output", call_id: "c1", output },
];
const responsesTools = [{ type: "function", name: "cat", parameters: { type: "object", properties: {} }, strict: false }];
const claudeMessages = [
  { role: "user", content: "find the needle" },
  { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "cat", input: {} }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: output }] },
];
const claudeTools = [{ name: "cat", input_schema: { type: "object", properties: {} } }];

function azure() {
  return new AzureOpenAI({ apiKey: "az-key", endpoint: proxy.url, apiVersion: "2025-04-01-preview", deployment: "gpt-4o", maxRetries: 0 });
}

test("Azure OpenAI: chat.completions.create, streamed and not", async () => {
  const r = await azure().chat.completions.create({ model: "gpt-4o", messages: chatMessages, tools: chatTools });
  assert.equal(r.choices[0].message.content, expected);
  assert.ok(!JSON.stringify(r).includes("read_blob"));
  const stream = await azure().chat.completions.create({ model: "gpt-4o", messages: chatMessages, tools: chatTools, stream: true });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
  assert.equal(text, expected);
});

test("Azure OpenAI: responses.create, streamed and not", async () => {
  const r = await azure().responses.create({ model: "gpt-5", input: responsesInput, tools: responsesTools });
  assert.equal(r.output_text, expected);
  assert.ok(!JSON.stringify(r).includes("read_blob"));
  const stream = await azure().responses.create({ model: "gpt-5", input: responsesInput, tools: responsesTools, stream: true });
  let text = "";
  for await (const e of stream) if (e.type === "response.output_text.delta") text += e.delta;
  assert.equal(text, expected);
});

function vertex() {
  // A stand-in for google-auth-library's client: an OAuth token, no network.
  const authClient = { projectId: "proj", getRequestHeaders: async () => new Headers({ authorization: "Bearer ya29.test-token" }) };
  return new AnthropicVertex({ authClient, region: "us-east5", projectId: "proj", baseURL: `${proxy.url}/v1`, maxRetries: 0 });
}

test("Claude on Vertex AI: messages.create and messages.stream", async () => {
  const r = await vertex().messages.create({ model: "claude-sonnet-4-5@20250929", max_tokens: 200, messages: claudeMessages, tools: claudeTools });
  assert.equal(r.content[0].text, expected);
  assert.ok(!JSON.stringify(r).includes("read_blob"));
  const final = await vertex().messages.stream({ model: "claude-sonnet-4-5@20250929", max_tokens: 200, messages: claudeMessages, tools: claudeTools }).finalMessage();
  assert.equal(final.content[0].text, expected);
  assert.ok(!JSON.stringify(final).includes("read_blob"));
});

function bedrock(options = {}) {
  return new AnthropicBedrock({ awsRegion: "us-east-1", baseURL: proxy.url, maxRetries: 0, ...options });
}
const bedrockModel = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

test("Claude on Bedrock with an API key: messages.create and messages.stream (event-stream)", async () => {
  const client = bedrock({ apiKey: "bedrock-api-key" });
  const r = await client.messages.create({ model: bedrockModel, max_tokens: 200, messages: claudeMessages, tools: claudeTools });
  assert.equal(r.content[0].text, expected);
  assert.ok(!JSON.stringify(r).includes("read_blob"));
  const final = await client.messages.stream({ model: bedrockModel, max_tokens: 200, messages: claudeMessages, tools: claudeTools }).finalMessage();
  assert.equal(final.content[0].text, expected);
  assert.ok(!JSON.stringify(final).includes("read_blob"));
});

test("Claude on Bedrock without credentials (skipAuth): gistproxy signs every hop, verified by the AWS SDK's signer", async () => {
  const client = new AnthropicBedrock({ awsRegion: "us-west-2", baseURL: signingProxy.url, skipAuth: true, maxRetries: 0 });
  const before = gateSeen.length;
  const r = await client.messages.create({ model: bedrockModel, max_tokens: 200, messages: claudeMessages, tools: claudeTools });
  assert.equal(r.content[0].text, expected);
  const final = await client.messages.stream({ model: bedrockModel, max_tokens: 200, messages: claudeMessages, tools: claudeTools }).finalMessage();
  assert.equal(final.content[0].text, expected);
  const seen = gateSeen.slice(before);
  assert.equal(seen.length, 4);  // two hops each
  assert.ok(seen.every((s) => s.ok), JSON.stringify(seen));
});

test("Claude on Bedrock signed by the client: forwarded byte for byte (not offloaded, so the model sees the whole output)", async () => {
  const client = bedrock({ awsAccessKey: "AKIDCLIENT", awsSecretKey: "client-secret" });
  const r = await client.messages.create({ model: bedrockModel, max_tokens: 200, messages: claudeMessages, tools: claudeTools });
  assert.equal(r.content[0].text, "found: no needle found");
  const metrics = await (await fetch(`${proxy.adminUrl}/metrics`)).text();
  assert.match(metrics, /gistproxy_rewrite_failures_total\{api="bedrock-messages",reason="client_signed"\} [1-9]/);
});

function runtime() {
  // Bedrock Runtime's client speaks HTTP/2 by default (for its bidirectional
  // streams; h2c over http://): these tests give it the SDK's HTTP/1.1
  // handler, the one below keeps its default.
  return new BedrockRuntimeClient({ region: "us-east-1", endpoint: proxy.url, token: { token: "bedrock-api-key" },
    authSchemePreference: ["httpBearerAuth"], maxAttempts: 1, requestHandler: new NodeHttpHandler() });
}
const invokeBody = () => JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 200, messages: claudeMessages, tools: claudeTools });

test("AWS SDK: InvokeModel and InvokeModelWithResponseStream (the SDK's parser checks every CRC)", async () => {
  const r = await runtime().send(new InvokeModelCommand({ modelId: bedrockModel, body: invokeBody(), contentType: "application/json" }));
  const answer = JSON.parse(new TextDecoder().decode(r.body));
  assert.equal(answer.content[0].text, expected);
  const s = await runtime().send(new InvokeModelWithResponseStreamCommand({ modelId: bedrockModel, body: invokeBody(), contentType: "application/json" }));
  let text = "";
  const types = [];
  for await (const event of s.body) {
    assert.ok(event.chunk, `only chunks: ${JSON.stringify(Object.keys(event))}`);
    const e = JSON.parse(new TextDecoder().decode(event.chunk.bytes));
    types.push(e.type);
    if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
    assert.ok(!JSON.stringify(e).includes("read_blob"));
  }
  assert.equal(text, expected);
  assert.equal(types.filter((t) => t === "message_stop").length, 1);
});

const converseInput = () => ({
  modelId: bedrockModel,
  messages: [
    { role: "user", content: [{ text: "find the needle" }] },
    { role: "assistant", content: [{ toolUse: { toolUseId: "c1", name: "cat", input: {} } }] },
    { role: "user", content: [{ toolResult: { toolUseId: "c1", content: [{ text: output }], status: "success" } }] },
  ],
  toolConfig: { tools: [{ toolSpec: { name: "cat", inputSchema: { json: { type: "object", properties: {} } } } }] },
  inferenceConfig: { maxTokens: 200 },
});

test("AWS SDK: Converse and ConverseStream (tool results offloaded, read_blob answered inside the proxy)", async () => {
  const r = await runtime().send(new ConverseCommand(converseInput()));
  assert.equal(r.output.message.content.map((b) => b.text ?? "").join(""), expected);
  assert.equal(r.stopReason, "end_turn");
  assert.ok(!JSON.stringify(r.output).includes("read_blob"));
  assert.equal(r.usage.outputTokens, 20);  // summed over both hops
  const s = await runtime().send(new ConverseStreamCommand(converseInput()));
  let text = "";
  const kinds = [];
  for await (const event of s.stream) {
    const kind = Object.keys(event)[0];
    kinds.push(kind);
    assert.ok(!JSON.stringify(event).includes("read_blob"));
    if (kind === "contentBlockDelta" && event.contentBlockDelta.delta.text) text += event.contentBlockDelta.delta.text;
  }
  assert.equal(text, expected);
  assert.equal(kinds.filter((k) => k === "messageStart").length, 1);
  assert.equal(kinds.filter((k) => k === "messageStop").length, 1);
  assert.equal(kinds.at(-1), "metadata");
});

test("AWS SDK with its default handler (HTTP/2 with prior knowledge): InvokeModelWithResponseStream, Converse, ConverseStream", async () => {
  const client = new BedrockRuntimeClient({ region: "us-east-1", endpoint: proxy.url, token: { token: "bedrock-api-key" },
    authSchemePreference: ["httpBearerAuth"], maxAttempts: 1 });
  try {
    const s = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: bedrockModel, body: invokeBody(), contentType: "application/json" }));
    let streamed = "";
    for await (const event of s.body) {
      const e = JSON.parse(new TextDecoder().decode(event.chunk.bytes));
      if (e.type === "content_block_delta" && e.delta.type === "text_delta") streamed += e.delta.text;
    }
    assert.equal(streamed, expected);
    const r = await client.send(new ConverseCommand(converseInput()));
    assert.equal(r.output.message.content.map((b) => b.text ?? "").join(""), expected);
    const c = await client.send(new ConverseStreamCommand(converseInput()));
    let text = "";
    for await (const event of c.stream) if (event.contentBlockDelta?.delta?.text) text += event.contentBlockDelta.delta.text;
    assert.equal(text, expected);
  } finally {
    client.destroy();
  }
  const metrics = await (await fetch(`${proxy.adminUrl}/metrics`)).text();
  const streams = Number(metrics.match(/\ngistproxy_h2_streams_total (\d+)/)?.[1] ?? 0);
  assert.ok(streams >= 3, `HTTP/2 streams: ${streams}`);  // the three calls came over HTTP/2
});

test("Gemini on Vertex AI (@google/genai, vertexai: true): generateContent and generateContentStream", async () => {
  const ai = new GoogleGenAI({ vertexai: true, apiKey: "vertex-express-key", httpOptions: { baseUrl: proxy.url } });
  const contents = [
    { role: "user", parts: [{ text: "find the needle" }] },
    { role: "model", parts: [{ functionCall: { name: "cat", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { name: "cat", response: { result: output } } }] },
  ];
  const config = { tools: [{ functionDeclarations: [{ name: "cat" }] }] };
  const r = await ai.models.generateContent({ model: "gemini-2.5-flash", contents, config });
  assert.equal(r.text, expected);
  let text = "";
  for await (const chunk of await ai.models.generateContentStream({ model: "gemini-2.5-flash", contents, config })) text += chunk.text ?? "";
  assert.equal(text, expected);
});

test("every cloud's page-ins are counted under its own api label", async () => {
  const metrics = await (await fetch(`${proxy.adminUrl}/metrics`)).text();
  for (const api of ["azure-chat", "azure-responses", "vertex-messages", "vertex-gemini", "bedrock-messages", "bedrock-converse"])
    assert.match(metrics, new RegExp(`gistproxy_page_ins_total\\{api="${api}",mode="pattern",result="ok",source="proxy"\\} [1-9]`), api);
});
