"""Python httpx with HTTP/2 over TLS, as a Python agent would reach gistproxy.

usage: httpx_client.py URL CA_FILE BODY_FILE
Sends BODY_FILE twice on one HTTP/2 connection, once as a plain POST and once
with "stream": true read as a stream, and prints one JSON line: each answer's
HTTP version, status and body.
"""
import json
import sys

import httpx

url, ca, body_file = sys.argv[1:4]
with open(body_file, "rb") as f:
    body = json.loads(f.read())
headers = {"authorization": "Bearer sk-test", "content-type": "application/json"}
out = {}
with httpx.Client(http2=True, verify=ca, timeout=60) as client:
    r = client.post(url, content=json.dumps(body), headers=headers)
    out["plain"] = {"http_version": r.http_version, "status": r.status_code, "body": r.text}
    body["stream"] = True
    with client.stream("POST", url, content=json.dumps(body), headers=headers) as s:
        text = "".join(s.iter_text())
        out["stream"] = {"http_version": s.http_version, "status": s.status_code, "body": text}
print(json.dumps(out))
