// A framework's own agent loop using gistproxy as a service (plain HTTP, no SDK).
import { readFileSync } from "node:fs";
const { GISTPROXY_URL: GP, LLM_URL: LLM, OPENAI_API_KEY: KEY } = process.env;
type Call = { id: string; type: "function"; function: { name: string; arguments: string } };
type Message = { role: string; content?: string | null; tool_calls?: Call[]; tool_call_id?: string };
async function call(url: string, body?: unknown): Promise<any> {  // POST JSON (a string is sent as is), or GET
  const r = await fetch(url, { method: body === undefined ? "GET" : "POST",
    headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
    body: typeof body === "string" || body === undefined ? body : JSON.stringify(body) });
  return r.headers.get("content-type")?.startsWith("text/plain") ? r.text() : r.json();
}
const messages: Message[] = [{ role: "user", content: "find the needle" }, { role: "assistant", tool_calls: [{ id: "c1", type: "function",
  function: { name: "cat", arguments: "{}" } }] }, { role: "tool", tool_call_id: "c1", content: readFileSync(process.argv[2], "utf8") }];
for (;;) {
  const offloaded = await call(`${GP}/v1/offload/chat`, { model: "gpt-4o", messages });  // big outputs become references
  const reply: Message = (await call(`${LLM}/v1/chat/completions`, offloaded.body)).choices[0].message;  // exact bytes
  messages.push(reply);
  if (!reply.tool_calls?.length) { console.log(reply.content); break; }
  for (const c of reply.tool_calls) {  // read_blob, served from gistproxy's store
    const { handle, ...args } = JSON.parse(c.function.arguments);
    const page: string = await call(`${GP}/v1/blobs/${handle}?${new URLSearchParams(args)}`);
    messages.push({ role: "tool", tool_call_id: c.id, content: page });
  }
}
