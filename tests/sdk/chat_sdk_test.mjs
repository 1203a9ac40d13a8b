// The official openai SDK, pointed at gistproxy, must see exactly what it
// sees from the upstream directly: streamed and not.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startStack } from "./harness.mjs";

let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack.stop(); });

const client = (baseURL) => new OpenAI({ apiKey: "sk-test", baseURL: `${baseURL}/v1`, maxRetries: 0 });
const request = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Say hello" }] };

async function collect(baseURL) {
  const stream = await client(baseURL).chat.completions.create({ ...request, stream: true,
    stream_options: { include_usage: true } });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

test("a streamed chat completion passes through unchanged", async () => {
  const direct = await collect(stack.mockUrl);
  const proxied = await collect(stack.proxyUrl);
  assert.deepEqual(proxied, direct);
  const text = proxied.map((c) => c.choices[0]?.delta?.content ?? "").join("");
  assert.equal(text, "Hello from the mock.");
  assert.equal(proxied.at(-1).usage.total_tokens, 110);
});

test("a JSON chat completion passes through unchanged", async () => {
  const direct = await client(stack.mockUrl).chat.completions.create(request);
  const proxied = await client(stack.proxyUrl).chat.completions.create(request);
  assert.deepEqual(proxied, direct);
  assert.equal(proxied.choices[0].message.content, "Hello from the mock.");
});

test("a proxy error surfaces as an SDK error with the status", async () => {
  const broken = await startStack([], "http://127.0.0.1:1");  // nothing listens on port 1
  try {
    await assert.rejects(client(broken.proxyUrl).chat.completions.create(request),
      (err) => err instanceof OpenAI.APIError && err.status === 502 && /upstream/.test(err.message));
  } finally {
    await broken.stop();
  }
});
