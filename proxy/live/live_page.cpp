#include "proxy/live/live_page.hpp"

namespace gistproxy::proxy {
namespace {

// Every value from the API is put into the page with textContent, never as
// markup: tool names and models come from clients.
constexpr std::string_view page = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>gistproxy live view</title>
<style>
  :root { --bg:#0f1419; --panel:#171e26; --line:#2a3440; --text:#d6dde5; --dim:#8a97a6; --sent:#5b9bd5; --saved:#7cc47f;
          --pagein:#e0b450; --churn:#e0605a; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.4 system-ui, sans-serif; background:var(--bg); color:var(--text); }
  header { display:flex; align-items:baseline; gap:16px; padding:12px 20px; border-bottom:1px solid var(--line); }
  header h1 { font-size:18px; margin:0; }
  header .dim { color:var(--dim); }
  main { padding:16px 20px; display:grid; gap:16px; grid-template-columns: 1fr 1fr; }
  section { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:12px 14px; }
  section.wide { grid-column: 1 / -1; }
  h2 { font-size:13px; text-transform:uppercase; letter-spacing:.06em; color:var(--dim); margin:0 0 10px; }
  .cards { display:grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap:10px; }
  .card { border:1px solid var(--line); border-radius:5px; padding:8px 10px; }
  .card .label { color:var(--dim); font-size:12px; }
  .card .value { font-size:20px; font-variant-numeric: tabular-nums; }
  .card .sub { color:var(--dim); font-size:12px; }
  table { border-collapse:collapse; width:100%; font-variant-numeric: tabular-nums; }
  th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line); white-space:nowrap; }
  th { color:var(--dim); font-weight:normal; font-size:12px; }
  td.num, th.num { text-align:right; }
  tbody tr.pick { cursor:pointer; }
  tbody tr.pick:hover, tbody tr.selected { background:#22303d; }
  code { font-family: ui-monospace, monospace; font-size:12px; text-transform:none; }
  canvas { width:100%; height:160px; display:block; }
  .legend { display:flex; gap:14px; font-size:12px; color:var(--dim); margin-top:6px; }
  .legend i { display:inline-block; width:10px; height:10px; margin-right:4px; vertical-align:-1px; }
  .turn { border-top:1px solid var(--line); padding:8px 0; }
  .turn h3 { font-size:13px; margin:0 0 4px; }
  .churn { color:var(--churn); font-weight:600; }
  .bad { color:var(--churn); font-weight:600; }
  .empty { color:var(--dim); }
  #error { color:var(--churn); }
</style>
</head>
<body>
<header><h1>gistproxy</h1><span class="dim">live view</span><span class="dim" id="updated"></span><span id="error"></span></header>
<main>
  <section class="wide" id="totals-panel">
    <h2>Since start</h2>
    <div class="cards">
      <div class="card"><div class="label">requests</div><div class="value" id="requests">-</div></div>
      <div class="card"><div class="label">input tokens sent</div><div class="value" id="input-tokens">-</div></div>
      <div class="card"><div class="label">tokens saved</div><div class="value" id="tokens-saved">-</div><div class="sub" id="saved-share"></div></div>
      <div class="card"><div class="label">dollars saved (net)</div><div class="value" id="net-saved-usd">-</div><div class="sub" id="usd-detail"></div></div>
      <div class="card"><div class="label">cache-read share</div><div class="value" id="cache-read-share">-</div></div>
      <div class="card"><div class="label">offloads</div><div class="value" id="offloads">-</div></div>
      <div class="card"><div class="label">page-ins</div><div class="value" id="page-ins">-</div></div>
      <div class="card"><div class="label">churn</div><div class="value" id="churn">-</div><div class="sub" id="kept-inline"></div></div>
      <div class="card"><div class="label">integrity failures</div><div class="value" id="integrity-failures">-</div></div>
    </div>
    <div style="display:grid; grid-template-columns:1fr 1fr; gap:16px; margin-top:12px">
      <div><h2>Rewrite failures by reason</h2><table><tbody id="rewrite-failures"></tbody></table></div>
      <div id="groups-panel" hidden><h2>Treated vs control</h2>
        <table><thead><tr><th>group</th><th class="num">requests</th><th class="num">input tokens</th><th class="num">cost (USD)</th></tr></thead>
        <tbody id="groups"></tbody></table></div>
    </div>
  </section>
  <section>
    <h2>Tokens per minute, last hour</h2>
    <canvas id="tokens-chart"></canvas>
    <div class="legend"><span><i style="background:var(--sent)"></i>sent</span><span><i style="background:var(--saved)"></i>saved</span></div>
  </section>
  <section>
    <h2>Page-ins and churn per minute, last hour</h2>
    <canvas id="paging-chart"></canvas>
    <div class="legend"><span><i style="background:var(--pagein)"></i>page-ins</span><span><i style="background:var(--churn)"></i>churn</span></div>
  </section>
  <section class="wide">
    <h2>Recent conversations</h2>
    <table><thead><tr><th>trace id</th><th>API</th><th>model</th><th class="num">turns</th><th class="num">tokens saved</th>
      <th class="num">page-ins</th><th class="num">churn</th><th class="num">kept inline</th><th>last seen</th></tr></thead>
    <tbody id="conversations"></tbody></table>
  </section>
  <section class="wide">
    <h2>Tenants <span class="sub" id="tenants-folded"></span></h2>
    <table><thead><tr><th>tenant</th><th class="num">requests</th><th class="num">tokens saved</th><th class="num">saved share</th>
      <th class="num">without (USD)</th><th class="num">with (USD)</th><th class="num">net saved (USD)</th></tr></thead>
    <tbody id="tenants"></tbody></table>
  </section>
  <section class="wide" id="conversation-panel">
    <h2>Conversation <code id="conversation-id"></code></h2>
    <div id="conversation"><p class="empty">No conversation yet.</p></div>
  </section>
</main>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token");
const headers = token ? { Authorization: "Bearer " + token } : {};
let selected = null;

const int = (n) => Number(n).toLocaleString("en-US", { maximumFractionDigits: 0 });
const pct = (x) => (100 * x).toFixed(1) + "%";
const usd = (x) => "$" + Number(x).toFixed(4);
const short = (h) => (h || "").slice(0, 12);
const $ = (id) => document.getElementById(id);
function setText(id, text) { $(id).textContent = text; }
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function row(cells) {
  const tr = document.createElement("tr");
  for (const [text, cls] of cells) tr.appendChild(el("td", text, cls));
  return tr;
}
function ago(ms, now) {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 60 ? s + " s ago" : s < 3600 ? Math.round(s / 60) + " min ago" : Math.round(s / 3600) + " h ago";
}
async function get(path) {
  const r = await fetch(path, { headers, cache: "no-store" });
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

function chart(canvas, points, series) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  canvas.width = w * ratio; canvas.height = h * ratio;
  const g = canvas.getContext("2d");
  g.scale(ratio, ratio);
  g.clearRect(0, 0, w, h);
  const max = Math.max(1, ...points.flatMap((p) => series.map((s) => p[s.key])));
  const styles = getComputedStyle(document.documentElement);
  g.fillStyle = styles.getPropertyValue("--dim");
  g.font = "11px system-ui";
  g.fillText(int(max), 2, 10);
  const slot = w / points.length, bar = Math.max(1, slot / series.length - 1);
  points.forEach((p, i) => series.forEach((s, k) => {
    const v = p[s.key], bh = (v / max) * (h - 16);
    g.fillStyle = styles.getPropertyValue(s.color);
    g.fillRect(i * slot + k * bar, h - bh, bar, bh);
  }));
}

function renderSummary(s) {
  setText("requests", int(s.requests));
  setText("input-tokens", int(s.input_tokens));
  setText("tokens-saved", int(s.tokens_saved));
  setText("saved-share", pct(s.saved_share) + " of what would have been sent");
  setText("net-saved-usd", usd(s.net_saved_usd));
  setText("usd-detail", usd(s.usd_without) + " without, " + usd(s.usd_with) + " with gistproxy");
  setText("cache-read-share", pct(s.cache_read_share));
  setText("offloads", int(s.offloads));
  setText("page-ins", int(s.page_ins));
  setText("churn", int(s.churn));
  setText("kept-inline", int(s.kept_inline_churn) + " outputs kept inline for it");
  setText("integrity-failures", int(s.integrity_failures));
  const failures = $("rewrite-failures");
  failures.replaceChildren();
  const reasons = Object.entries(s.rewrite_failures);
  if (!reasons.length) failures.appendChild(row([["none", "empty"]]));
  for (const [reason, n] of reasons) {
    const tr = row([[reason], [int(n), "num"]]);
    tr.dataset.reason = reason;
    failures.appendChild(tr);
  }
  const groups = Object.entries(s.groups);
  $("groups-panel").hidden = !("control" in s.groups);
  $("groups").replaceChildren(...groups.map(([name, g]) => row([[name], [int(g.requests), "num"], [int(g.input_tokens), "num"], [usd(g.cost_usd), "num"]])));
  chart($("tokens-chart"), s.per_minute, [{ key: "sent", color: "--sent" }, { key: "saved", color: "--saved" }]);
  chart($("paging-chart"), s.per_minute, [{ key: "page_ins", color: "--pagein" }, { key: "churn", color: "--churn" }]);
}

function renderConversations(list, now) {
  const body = $("conversations");
  body.replaceChildren();
  if (!list.length) body.appendChild(row([["no conversations yet", "empty"]]));
  for (const c of list) {
    const tr = row([[c.trace_id], [c.api], [c.model], [int(c.turns), "num"], [int(c.tokens_saved), "num"],
                    [int(c.page_ins), "num"], [int(c.churn), c.churn ? "num churn" : "num"],
                    [int(c.kept_inline), c.kept_inline ? "num churn" : "num"], [ago(c.last_seen_unix_ms, now)]]);
    tr.firstChild.className = "mono";
    tr.classList.add("pick");
    if (c.trace_id === selected) tr.classList.add("selected");
    tr.dataset.trace = c.trace_id;
    tr.addEventListener("click", () => { selected = c.trace_id; refresh(); });
    body.appendChild(tr);
  }
}

// A tenant is the store's name for a credential (16 hex digits), never the key.
function renderTenants(t) {
  const body = $("tenants");
  body.replaceChildren();
  if (!t.tenants.length) body.appendChild(row([["no tenants yet", "empty"]]));
  for (const r of t.tenants) {
    const tr = row([[r.tenant, "mono"], [int(r.requests), "num"], [int(r.tokens_saved), "num"], [pct(r.saved_share), "num"],
                    [usd(r.usd_without), "num"], [usd(r.usd_with), "num"], [usd(r.net_saved_usd), r.net_saved_usd < 0 ? "num bad" : "num"]]);
    tr.dataset.tenant = r.tenant;
    body.appendChild(tr);
  }
  setText("tenants-folded", t.tenants_folded ? int(t.tenants_folded) + " more folded into other" : "");
}

function renderConversation(c) {
  setText("conversation-id", c.trace_id);
  const box = $("conversation");
  box.replaceChildren();
  const head = el("p", c.api + " · " + c.model + " · " + int(c.turns) + " turns · " + int(c.tokens_saved) + " tokens saved · " +
                  int(c.page_ins) + " page-ins · " + int(c.churn) + " churn · " + int(c.kept_inline) + " kept inline for churn · " +
                  int(c.integrity_failures) + " integrity failures");
  box.appendChild(head);
  if (c.turns_not_shown) box.appendChild(el("p", int(c.turns_not_shown) + " earlier turns not kept", "empty"));
  for (const t of c.turns_detail) {
    const div = el("div", undefined, "turn");
    div.appendChild(el("h3", "turn " + t.turn + " · HTTP " + t.status + " · " + int(t.input_tokens) + " input tokens · " +
                       int(t.offloads) + " offloads · " + int(t.tokens_saved) + " tokens saved" +
                       (t.kept_inline ? " · " + int(t.kept_inline) + " kept inline for churn" : "")));
    if (t.new_offloads.length) {
      const table = el("table");
      table.appendChild(row([["offloaded"], ["handle"], ["tool"], ["kind"], ["bytes", "num"], ["tokens", "num"]]));
      for (const o of t.new_offloads)
        table.appendChild(row([[""], [short(o.handle), "mono"], [o.tool], [o.kind], [int(o.bytes), "num"],
                               [int(o.tokens_before) + " → " + int(o.tokens_after), "num"]]));
      div.appendChild(table);
    }
    if (t.new_offloads_not_shown) div.appendChild(el("p", int(t.new_offloads_not_shown) + " more new offloads not shown", "empty"));
    if (t.page_ins.length) {
      const table = el("table");
      table.appendChild(row([["paged in"], ["handle"], ["tool"], ["shape"], ["hop", "num"], ["integrity"], ["result"], ["churn"]]));
      for (const p of t.page_ins) {
        const tr = row([[""], [short(p.handle), "mono"], [p.tool], [p.shape], [p.hop, "num"],
                        [p.integrity_ok ? "ok" : "FAILED", p.integrity_ok ? "" : "bad"], [p.result],
                        [p.churn ? "churn: offloaded turn " + p.offload_turn : "", "churn"]]);
        if (p.churn) tr.dataset.churn = "1";
        table.appendChild(tr);
      }
      div.appendChild(table);
    }
    if (t.page_ins_not_shown) div.appendChild(el("p", int(t.page_ins_not_shown) + " more page-ins not shown", "empty"));
    box.appendChild(div);
  }
}

async function refresh() {
  try {
    const [s, list, tenants] = await Promise.all([get("/api/summary"), get("/api/conversations"), get("/api/tenants")]);
    renderSummary(s);
    renderTenants(tenants);
    if (!selected && list.conversations.length) selected = list.conversations[0].trace_id;
    renderConversations(list.conversations, s.unix_ms);
    if (selected) {
      try { renderConversation(await get("/api/conversations/" + selected)); }
      catch (e) { selected = null; }
    }
    setText("updated", "updated " + new Date(s.unix_ms).toLocaleTimeString());
    setText("error", "");
    document.body.dataset.updatedMs = String(s.unix_ms);
  } catch (e) {
    setText("error", String(e.message || e));
  }
}
refresh();
setInterval(refresh, 1000);
</script>
</body>
</html>
)html";

}  // namespace

std::string_view live_page_html() { return page; }

}  // namespace gistproxy::proxy
