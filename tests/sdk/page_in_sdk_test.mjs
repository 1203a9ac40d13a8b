// The official SDKs, not streaming, ask a question whose answer is buried in
// an offloaded 200 KB tool output: gistproxy resolves the model's read_blob
// call and the SDK gets a normal answer that never mentions read_blob.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { expectedNeedle, haystack, startStack } from "./harness.mjs";

let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack.stop(); });

const expected = expectedNeedle;
const output = haystack();

test("openai chat.completions.create", async () => {
  const client = new OpenAI({ apiKey: "sk-test", baseURL: `${stack.proxyUrl}/v1`, maxRetries: 0 });
  const r = await client.chat.completions.create({
    model: "gpt-4o",
    messages: [
      { role: "user", content: "find the needle" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "cat", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: output },
    ],
    tools: [{ type: "function", function: { name: "cat", parameters: { type: "object", properties: {} } } }],
  });
  assert.equal(r.choices[0].message.content, expected);
  assert.equal(r.usage.prompt_tokens, 200);
  assert.ok(!JSON.stringify(r).includes("read_blob"));
});

test("openai responses.create", async () => {
  const client = new OpenAI({ apiKey: "sk-test", baseURL: `${stack.proxyUrl}/v1`, maxRetries: 0 });
  const r = await client.responses.create({
    model: "gpt-5",
    input: [
      { role: "user", content: "find the needle" },
      { type: "function_call", call_id: "c1", name: "cat", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output },
    ],
    tools: [{ type: "function", name: "cat", parameters: { type: "object", properties: {} }, strict: false }],
  });
  assert.equal(r.output_text, expected);
  assert.ok(!JSON.stringify(r).includes("read_blob"));
});

test("anthropic messages.create", async () => {
  const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: stack.proxyUrl, maxRetries: 0 });
  const r = await client.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 200,
    messages: [
      { role: "user", content: "find the needle" },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "cat", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: output }] },
    ],
    tools: [{ name: "cat", input_schema: { type: "object", properties: {} } }],
  });
  assert.equal(r.content[0].text, expected);
  // Anthropic's input_tokens exclude the prompt cache: the mock reports, per
  // hop, 20 uncached + 64 read + 16 written; every figure is summed over hops.
  assert.equal(r.usage.input_tokens, 40);
  assert.equal(r.usage.cache_read_input_tokens, 128);
  assert.equal(r.usage.cache_creation_input_tokens, 32);
  assert.ok(!JSON.stringify(r).includes("read_blob"));
});

test("anthropic messages.stream", async () => {
  const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: stack.proxyUrl, maxRetries: 0 });
  const stream = client.messages.stream({
    model: "claude-sonnet-4-5",
    max_tokens: 200,
    messages: [
      { role: "user", content: "find the needle" },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "cat", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: output }] },
    ],
    tools: [{ name: "cat", input_schema: { type: "object", properties: {} } }],
  });
  let streamedText = "";
  stream.on("text", (t) => { streamedText += t; });
  const message = await stream.finalMessage();
  assert.equal(streamedText, expected);
  assert.equal(message.content.length, 1);
  assert.equal(message.content[0].text, expected);
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.usage.output_tokens, 20);
  // The final message_delta carries the figures summed over both hops.
  assert.equal(message.usage.input_tokens, 40);
  assert.equal(message.usage.cache_read_input_tokens, 128);
  assert.equal(message.usage.cache_creation_input_tokens, 32);
  assert.ok(!JSON.stringify(message).includes("read_blob"));
});

test("openai chat.completions.create, streamed", async () => {
  const client = new OpenAI({ apiKey: "sk-test", baseURL: `${stack.proxyUrl}/v1`, maxRetries: 0 });
  const stream = await client.chat.completions.create({
    model: "gpt-4o",
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: "user", content: "find the needle" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "cat", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: output },
    ],
    tools: [{ type: "function", function: { name: "cat", parameters: { type: "object", properties: {} } } }],
  });
  let text = "";
  let usage = null;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? "";
    assert.ok(!JSON.stringify(chunk).includes("read_blob"));
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, expected);
  assert.equal(usage.prompt_tokens, 200);
});

test("openai responses.stream", async () => {
  const client = new OpenAI({ apiKey: "sk-test", baseURL: `${stack.proxyUrl}/v1`, maxRetries: 0 });
  const stream = client.responses.stream({
    model: "gpt-5",
    input: [
      { role: "user", content: "find the needle" },
      { type: "function_call", call_id: "c1", name: "cat", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output },
    ],
    tools: [{ type: "function", name: "cat", parameters: { type: "object", properties: {} }, strict: false }],
  });
  let text = "";
  stream.on("response.output_text.delta", (e) => { text += e.delta; });
  const final = await stream.finalResponse();
  assert.equal(text, expected);
  const message = final.output.find((item) => item.type === "message");
  assert.equal(message.content[0].text, expected);
  assert.equal(final.usage.input_tokens, 200);
  assert.ok(!JSON.stringify(final).includes("read_blob"));
});

// Last: the mock compresses as the real APIs do, so every answer above came in
// the coding the SDK's own Accept-Encoding allowed and was decoded to be read.
test("the SDKs' answers came compressed and were decoded to intercept read_blob", async () => {
  const metrics = await (await fetch(`${stack.adminUrl}/metrics`)).text();
  const decoded = [...metrics.matchAll(/^gistproxy_upstream_answers_decoded_total\{coding="[a-z]+"\} (\d+)$/gm)]
    .reduce((sum, m) => sum + Number(m[1]), 0);
  assert.ok(decoded >= 2, `decoded answers: ${decoded}`);
});
