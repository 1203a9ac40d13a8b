// The official Google Gen AI SDK (@google/genai) through gistproxy, JSON and
// streamed: a 200 KB function response is offloaded, the model's read_blob
// call is answered inside the proxy (its thoughtSignature passed back: the
// mock upstream refuses the next hop otherwise, as Gemini 3 does), and the SDK
// gets a normal answer that never mentions read_blob.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { GoogleGenAI } from "@google/genai";
import { expectedNeedle, haystack, startStack } from "./harness.mjs";

let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack.stop(); });

const expected = expectedNeedle;
const output = haystack();

function request(ask) {
  return {
    model: "gemini-2.5-flash",
    contents: [
      { role: "user", parts: [{ text: ask }] },
      { role: "model", parts: [{ functionCall: { name: "cat", args: {} } }] },
      { role: "user", parts: [{ functionResponse: { name: "cat", response: { result: output } } }] },
    ],
    config: { tools: [{ functionDeclarations: [{ name: "cat", parameters: { type: "object", properties: {} } }] }] },
  };
}

function client() {
  return new GoogleGenAI({ apiKey: "gm-test", httpOptions: { baseUrl: stack.proxyUrl } });
}

test("google genai models.generateContent", async () => {
  const r = await client().models.generateContent(request("find the needle"));
  assert.equal(r.text, expected);
  assert.equal(r.usageMetadata.promptTokenCount, 200);
  assert.equal(r.functionCalls, undefined);
  assert.ok(!JSON.stringify(r).includes("read_blob"));
});

test("google genai models.generateContentStream", async () => {
  const stream = await client().models.generateContentStream(request("find the needle"));
  let text = "";
  let last;
  for await (const chunk of stream) {
    assert.ok(!JSON.stringify(chunk).includes("read_blob"));
    text += chunk.text ?? "";
    last = chunk;
  }
  assert.equal(text, expected);
  assert.equal(last.candidates[0].finishReason, "STOP");
  assert.equal(last.usageMetadata.promptTokenCount, 200);
});

test("google genai: the client's own call reaches it once, read_blob never", async () => {
  const r = await client().models.generateContent(request("with client call"));
  assert.deepEqual(r.functionCalls.map((c) => c.name), ["run"]);
  const stream = await client().models.generateContentStream(request("with client call"));
  const calls = [];
  for await (const chunk of stream) for (const c of chunk.functionCalls ?? []) calls.push(c.name);
  assert.deepEqual(calls, ["run"]);
});
