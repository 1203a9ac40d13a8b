// The admin listener's live view in a real browser: Debian's headless
// chromium (puppeteer-core) opens the page of a real gistproxy under scripted
// traffic (offloads, page-ins, a churned blob, an integrity failure). The
// numbers it renders equal /api/summary and /metrics, it logs no console
// error, it asks nothing of any host but 127.0.0.1, and its screenshot is
// written to BUILD/artifacts/live-view.png (docs/live-view.png in the README).
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";
import { startMock, startProxy, stopProcess } from "./harness.mjs";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const artifacts = path.join(process.env.GISTPROXY_BUILD, "artifacts");
const store = fs.mkdtempSync(path.join(os.tmpdir(), "gp-live-view-"));
let mock, proxy;

before(async () => {
  mock = await startMock();
  proxy = await startProxy(mock.url, ["--store", store, "--inject-read-blob", "always"]);
});
after(async () => {
  for (const p of [proxy?.process, mock?.process]) if (p) await stopProcess(p);
  fs.rmSync(store, { recursive: true, force: true });
});

function configDump(salt) {
  const lines = [];
  for (let i = 0, size = 0; size < 120 * 1024; i++) {
    if (i === 1500) lines.push("line 1500: NEEDLE port=48213");
    const l = `${salt} line ${i}: key_${i}=${(i * 37) % 1009}`;
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join("\n") + "\n";
}
const sha256 = (s) => createHash("sha256").update(s).digest("hex");

function chat(ask, output, tool, extra = []) {
  return {
    model: "gpt-4o",
    messages: [
      { role: "user", content: ask },
      { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: tool, arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: output },
      ...extra,
    ],
    tools: [{ type: "function", function: { name: tool } }],
  };
}

async function post(body) {
  const r = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-live-view" },
    body: JSON.stringify(body),
  });
  await r.text();
  assert.equal(r.status, 200);
}

function findFile(dir, name) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) { const f = findFile(p, name); if (f) return f; }
    else if (e.name === name) return p;
  }
  return null;
}

// Offloads and page-ins; a blob paged back in the turn that offloaded it (churn);
// a blob corrupted on disk, then paged in (integrity failure).
async function scriptedTraffic() {
  const churned = configDump("alpha");
  await post(chat("find the needle in the config", churned, "read_config"));
  await post(chat("hello", configDump("beta"), "list_files"));
  await post(chat("hello", configDump("beta"), "list_files", [{ role: "assistant", content: "ok" }, { role: "user", content: "thanks" }]));
  const secret = configDump("delta");
  await post(chat("hello again", secret, "read_config"));
  const blob = findFile(store, `${sha256(secret)}.blob`);
  assert.ok(blob, "the blob to corrupt is in the store");
  const fd = fs.openSync(blob, "r+");
  const size = fs.fstatSync(fd).size;
  fs.writeSync(fd, Buffer.from([1]), 0, 1, size - 10);
  fs.closeSync(fd);
  await post(chat("find the needle, please", secret, "read_config"));
  return { churnedHandle: sha256(churned) };
}

function metricSum(text, name, label = "") {
  let sum = 0;
  for (const line of text.split("\n")) {
    const m = line.match(new RegExp(`^${name}(\\{[^}]*\\})? ([0-9.e+-]+)$`));
    if (m && (m[1] || "").includes(label)) sum += Number(m[2]);
  }
  return sum;
}
const getJson = async (p) => (await fetch(proxy.adminUrl + p)).json();
const number = (text) => Number(text.replace(/,/g, ""));

test("the live view renders /metrics' numbers, marks the churn and the integrity failure, offline", async () => {
  const { churnedHandle } = await scriptedTraffic();
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
           "--no-first-run", "--disable-sync", "--disable-default-apps"],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const requests = [], offHost = [], consoleErrors = [];
    await page.setRequestInterception(true);
    page.on("request", (r) => {
      requests.push(r.url());
      const host = new URL(r.url()).hostname;
      if (host !== "127.0.0.1" && !r.url().startsWith("data:")) { offHost.push(r.url()); r.abort(); }
      else r.continue();
    });
    page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    await page.goto(proxy.adminUrl + "/", { waitUntil: "load" });

    // The page polls: wait (bounded) until it shows what /metrics says now.
    const ids = ["requests", "input-tokens", "tokens-saved", "offloads", "page-ins", "churn", "integrity-failures"];
    const metricOf = {
      requests: (t) => metricSum(t, "gistproxy_requests_total"),
      "input-tokens": (t) => metricSum(t, "gistproxy_input_tokens_total"),
      // The ledger's saved: the client's requests as sent minus every request gistproxy made.
      "tokens-saved": (t) => metricSum(t, "gistproxy_ledger_input_tokens_total", 'side="without"') -
                             metricSum(t, "gistproxy_ledger_input_tokens_total", 'side="with"'),
      offloads: (t) => metricSum(t, "gistproxy_offloads_total"),
      "page-ins": (t) => metricSum(t, "gistproxy_page_ins_total"),
      churn: (t) => metricSum(t, "gistproxy_paging_churn_total"),
      "integrity-failures": (t) => metricSum(t, "gistproxy_integrity_failures_total"),
    };
    const summaryKey = { requests: "requests", "input-tokens": "input_tokens", "tokens-saved": "tokens_saved", offloads: "offloads",
                         "page-ins": "page_ins", churn: "churn", "integrity-failures": "integrity_failures" };
    let dom, metrics, summary;
    const deadline = Date.now() + 15000;
    for (;;) {
      metrics = await (await fetch(proxy.adminUrl + "/metrics")).text();
      summary = await getJson("/api/summary");
      dom = await page.evaluate((list) => Object.fromEntries(list.map((id) => [id, document.getElementById(id).textContent])), ids);
      if (ids.every((id) => number(dom[id]) === metricOf[id](metrics)) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const id of ids) {
      assert.equal(number(dom[id]), metricOf[id](metrics), `${id} on the page vs /metrics`);
      assert.equal(number(dom[id]), summary[summaryKey[id]], `${id} on the page vs /api/summary`);
    }
    assert.equal(metricOf.requests(metrics), 5);
    assert.ok(metricOf.churn(metrics) >= 1 && metricOf["integrity-failures"](metrics) === 1);

    // The tenants panel: /api/tenants' rows, its one key named by the store's hash, never the key.
    const tenants = (await getJson("/api/tenants")).tenants;
    assert.equal(tenants.length, 1);
    await page.waitForFunction((name) => document.querySelector(`#tenants tr[data-tenant="${name}"]`), { timeout: 5000 },
                               tenants[0].tenant);
    const tenantRow = await page.$eval("#tenants tr[data-tenant]", (tr) => [...tr.children].map((td) => td.textContent));
    assert.equal(tenantRow[0], tenants[0].tenant);
    assert.equal(number(tenantRow[1]), tenants[0].requests);
    assert.equal(number(tenantRow[2]), tenants[0].tokens_saved);
    assert.ok(!(await page.content()).includes("sk-live-view"));

    // The conversations panel, newest first; the churned conversation's turns mark its churn pair.
    const list = (await getJson("/api/conversations")).conversations;
    const rows = await page.$$eval("#conversations tr[data-trace]", (trs) => trs.map((tr) => tr.dataset.trace));
    assert.deepEqual(rows, list.map((c) => c.trace_id));
    const churnedConversation = list.find((c) => c.churn > 0 && c.integrity_failures === 0);
    await pick(page, churnedConversation.trace_id);
    await page.waitForFunction(() => document.querySelector("#conversation tr[data-churn]"), { timeout: 5000 });
    const marked = await page.$eval("#conversation tr[data-churn]", (tr) => tr.textContent);
    assert.match(marked, new RegExp(churnedHandle.slice(0, 12)));
    assert.match(marked, /churn: offloaded turn 1/);

    fs.mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, "live-view.png"), fullPage: true });
    // The integrity failure, shown in its conversation.
    const failed = list.find((c) => c.integrity_failures > 0);
    await pick(page, failed.trace_id);
    await page.waitForFunction(() => [...document.querySelectorAll("#conversation td.bad")].some((td) => td.textContent === "FAILED"),
                               { timeout: 5000 });

    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(offHost, []);
    assert.ok(requests.some((u) => u.endsWith("/api/summary")));
    assert.ok(requests.every((u) => new URL(u).hostname === "127.0.0.1"));
  } finally {
    await browser.close();
  }
});

// The page re-renders its conversations table every second, so a handle to a
// row goes stale between finding it and clicking it ("Node is detached").
// Find and click in one task inside the page, until the panel shows the pick.
async function pick(page, traceId) {
  await page.waitForFunction((id) => {
    if (document.getElementById("conversation-id").textContent === id) return true;
    const row = document.querySelector(`#conversations tr[data-trace="${id}"]`);
    if (row) row.click();
    return false;
  }, { timeout: 10000, polling: 100 }, traceId);
}

// Models and tool names come from clients: the page must put them into the DOM
// as text. Rendered as markup, this tool name would become an <img> whose
// handler runs in the operator's browser.
test("a client's model and tool name reach the page as text, never as markup", async () => {
  const tool = `<img src=x onerror="window.__injected=1">`;
  const model = `<b class="injected">m</b>`;
  const body = chat("markup in names", configDump("gamma"), tool);
  body.model = model;
  await post(body);
  const conversation = (await getJson("/api/conversations")).conversations.find((c) => c.model === model);
  assert.ok(conversation, "listed, with its model as sent");
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    await page.goto(proxy.adminUrl + "/", { waitUntil: "load" });
    await pick(page, conversation.trace_id);
    const cellHolds = (selector, text) =>
      [...document.querySelectorAll(selector)].some((td) => td.textContent === text);
    await page.waitForFunction(`(${cellHolds})("#conversation td", ${JSON.stringify(tool)})`, { timeout: 10000 });
    const dom = await page.evaluate((model) => ({
      markup: document.querySelectorAll("main img, main b.injected").length,
      ran: window.__injected === 1,
      modelShown: [...document.querySelectorAll("#conversations td")].some((td) => td.textContent === model),
    }), model);
    assert.deepEqual(dom, { markup: 0, ran: false, modelShown: true });
  } finally {
    await browser.close();
  }
});
