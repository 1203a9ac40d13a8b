// gistproxy's SigV4 against the AWS SDK's own signer (@smithy/signature-v4),
// on the requests the real binary sends: serve offloading and paging in
// (HEAD bucket, HEAD/PUT/GET objects with metadata and If-None-Match, a list
// with a prefix query) and `blob verify`, with a session token and a region
// other than us-east-1. A capturing endpoint answers as S3 would and keeps
// every request; one blob is "old" (stored by someone else days ago), so its
// re-offload refreshes its age by a copy onto itself. For each request: x-amz-content-sha256 is the SHA-256 of the
// body received; smithy, given the same request and time, produces the same
// Authorization header as the wire; and gistproxy's signer (gistproxy-sigv4)
// produces smithy's canonical request and string to sign byte for byte.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { SignatureV4, getCanonicalHeaders } from "@smithy/signature-v4";
import { Sha256 } from "@aws-crypto/sha256-js";
import { startMock, startProxy, stopProcess } from "./harness.mjs";

const BUILD = process.env.GISTPROXY_BUILD;
const CREDS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  sessionToken: "FQoGZXIvYXdzEXAMPLEtokenWithSlashes/and+plus==" };
const ENV = { AWS_ACCESS_KEY_ID: CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey,
  AWS_SESSION_TOKEN: CREDS.sessionToken, AWS_REGION: "eu-west-3" };
const captured = [];
const oldOutput = Array.from({ length: 3000 }, (_, i) => `old blob line ${i}: ${"y".repeat(20)}`).join("\n");
const oldHash = createHash("sha256").update(oldOutput).digest("hex");
let endpoint, server, mock, proxy;

before(async () => {
  server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      captured.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      const url = new URL(req.url, "http://x");
      if (req.method === "GET" && url.searchParams.get("list-type") === "2") {
        res.writeHead(200, { "content-type": "application/xml" });
        return res.end("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
      }
      const bucketOnly = url.pathname.split("/").filter(Boolean).length === 1;
      // The "old" blob: stored long ago (by another replica), so a conditional
      // PUT finds it (412) and its HEAD shows an age past the refresh interval.
      const old = url.pathname.endsWith(`/${oldHash}`);
      if (old && req.method === "PUT" && req.headers["if-none-match"] === "*") res.writeHead(412);
      else if (old && req.method === "HEAD") res.writeHead(200, { "last-modified": new Date(Date.now() - 3 * 86400e3).toUTCString() });
      else res.writeHead(req.method === "PUT" || bucketOnly ? 200 : 404);
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  endpoint = `http://127.0.0.1:${server.address().port}`;
  mock = await startMock();
  proxy = await startProxy(mock.url, ["--store", "s3://sig-bucket/some/prefix", "--s3-endpoint", endpoint], ENV);
});

after(async () => {
  for (const p of [proxy?.process, mock?.process]) if (p) await stopProcess(p);
  server?.close();
});

function sigv4Tool(input) {
  return new Promise((resolve, reject) => {
    const p = spawn(`${BUILD}/gistproxy-sigv4`, [], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => { out += d; });
    p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`gistproxy-sigv4 exited ${code}`))));
    p.stdin.end(JSON.stringify(input));
  });
}

function dateOf(amzDate) {
  const m = amzDate.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
}

async function checkRequest(r) {
  const auth = r.headers.authorization;
  const m = auth.match(/^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/);
  assert.ok(m, `Authorization header shape: ${auth}`);
  const [, keyId, , region, signedList] = m;
  assert.equal(keyId, CREDS.accessKeyId);
  assert.equal(region, "eu-west-3");
  const payloadHash = createHash("sha256").update(r.body).digest("hex");
  assert.equal(r.headers["x-amz-content-sha256"], payloadHash, "x-amz-content-sha256 is the body's SHA-256");
  assert.equal(r.headers["x-amz-security-token"], CREDS.sessionToken);
  const signed = signedList.split(";");
  for (const h of ["host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"]) assert.ok(signed.includes(h), h);

  const url = new URL(r.url, endpoint);
  const query = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const headers = {};
  for (const h of signed) headers[h] = r.headers[h];
  const request = { method: r.method, protocol: "http:", hostname: url.hostname, port: Number(url.port),
    path: url.pathname, query, headers, body: r.body };

  const signer = new SignatureV4({ credentials: CREDS, region, service: "s3", sha256: Sha256, uriEscapePath: false });
  const longDate = r.headers["x-amz-date"];
  const bySmithy = await signer.sign(structuredClone(request), { signingDate: dateOf(longDate) });
  assert.equal(bySmithy.headers.authorization, auth, `${r.method} ${r.url}: smithy signs it the same`);

  const canonical = signer.createCanonicalRequest(request, getCanonicalHeaders(request), payloadHash);
  const scope = `${longDate.slice(0, 8)}/${region}/s3/aws4_request`;
  const stringToSign = await signer.createStringToSign(longDate, scope, canonical, "AWS4-HMAC-SHA256");
  const ours = await sigv4Tool({
    method: r.method, path: decodeURIComponent(url.pathname), query: [...url.searchParams],
    headers: signed.filter((h) => !["x-amz-date", "x-amz-content-sha256", "x-amz-security-token"].includes(h))
      .map((h) => [h, r.headers[h]]),
    payload_sha256: payloadHash, amz_date: longDate, region, service: "s3",
    access_key_id: CREDS.accessKeyId, secret_access_key: CREDS.secretAccessKey, session_token: CREDS.sessionToken });
  assert.equal(ours.canonical_request, canonical, `${r.method} ${r.url}: canonical request`);
  assert.equal(ours.string_to_sign, stringToSign, `${r.method} ${r.url}: string to sign`);
  assert.equal(ours.authorization, auth);
}

test("every request serve and blob send to S3 is signed as the AWS SDK signs it, byte for byte", async () => {
  const lines = [];
  for (let i = 0; i < 4000; i++) lines.push(`line ${i}: ${i === 1000 ? "NEEDLE" : "hay"} ${"x".repeat(20)}`);
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-sig" },
    body: JSON.stringify({ model: "gpt-4o", messages: [
      { role: "user", content: "find the needle" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "cat", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: lines.join("\n") }] }) });
  assert.equal(res.status, 200);
  await res.text();
  const again = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-sig" },
    body: JSON.stringify({ model: "gpt-4o", messages: [
      { role: "user", content: "plain question" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "cat", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: oldOutput }] }) });
  assert.equal(again.status, 200);
  await again.text();
  await promisify(execFile)(`${BUILD}/gistproxy`, ["blob", "verify", "--store", "s3://sig-bucket/some/prefix",
    "--s3-endpoint", endpoint], { env: { ...process.env, ...ENV } });

  const kinds = new Set(captured.map((r) => `${r.method} ${new URL(r.url, endpoint).searchParams.has("list-type") ? "list" : "path"}`));
  for (const k of ["HEAD path", "PUT path", "GET list"]) assert.ok(kinds.has(k), `saw ${k}: ${[...kinds]}`);
  const put = captured.find((r) => r.method === "PUT");
  assert.ok(put.body.length > 0 && put.headers["if-none-match"] === "*");
  assert.ok(put.headers.authorization.includes("if-none-match") && put.headers.authorization.includes("x-amz-meta-gistproxy-kind"));
  // The old blob's age is refreshed by a copy onto itself, without its bytes.
  const copy = captured.find((r) => r.method === "PUT" && r.headers["x-amz-copy-source"]);
  assert.ok(copy, "a refresh copy");
  assert.ok(copy.url.endsWith(`/${oldHash}`));
  assert.equal(copy.headers["x-amz-copy-source"], new URL(copy.url, endpoint).pathname);
  assert.equal(copy.headers["x-amz-metadata-directive"], "REPLACE");
  assert.equal(copy.body.length, 0);
  assert.ok(copy.headers.authorization.includes("x-amz-copy-source"));
  for (const r of captured) await checkRequest(r);
});
