# A framework's own agent loop using gistproxy as a service (plain HTTP, no SDK).
import json, os, sys, urllib.parse, urllib.request
GP, LLM, KEY = os.environ["GISTPROXY_URL"], os.environ["LLM_URL"], os.environ["OPENAI_API_KEY"]
def call(url, body=None):  # POST JSON (a str is sent as is), or GET; the same key names the tenant
    data = body if isinstance(body, str) else body and json.dumps(body)
    r = urllib.request.urlopen(urllib.request.Request(url, data and data.encode(), {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}))
    return r.read().decode() if r.headers.get_content_type() == "text/plain" else json.load(r)
messages = [{"role": "user", "content": "find the needle"}, {"role": "assistant", "tool_calls": [{"id": "c1",
    "type": "function", "function": {"name": "cat", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": open(sys.argv[1]).read()}]
while True:
    offloaded = call(f"{GP}/v1/offload/chat", {"model": "gpt-4o", "messages": messages})  # big outputs become references
    reply = call(f"{LLM}/v1/chat/completions", offloaded["body"])["choices"][0]["message"]  # the exact bytes gistproxy would send
    messages.append(reply)
    if not reply.get("tool_calls"): break
    for c in reply["tool_calls"]:  # read_blob, served from gistproxy's store
        args = json.loads(c["function"]["arguments"]); handle = args.pop("handle")
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": call(f"{GP}/v1/blobs/{handle}?{urllib.parse.urlencode(args)}")})
print(reply["content"])
