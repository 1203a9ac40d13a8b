// gistproxy's exact token counts against the reference: the npm tiktoken
// package's encode_ordinary, for o200k_base and cl100k_base, on a corpus of
// code, logs, JSON, CJK, emoji and edge cases (tests/fixtures/tokenizer and
// files of this repo) plus seeded random strings drawn from many scripts and
// every kind of white space. Every count must be identical.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { get_encoding } from "tiktoken";

const BUILD = process.env.GISTPROXY_BUILD;
const SOURCE = process.env.GISTPROXY_SOURCE;
if (!BUILD || !SOURCE) throw new Error("GISTPROXY_BUILD and GISTPROXY_SOURCE must be set");

const corpusFiles = [
  ...fs.readdirSync(path.join(SOURCE, "tests/fixtures/tokenizer")).map((f) => `tests/fixtures/tokenizer/${f}`),
  "rewrite/tokens/bpe_merge.cpp", "proxy/config.cpp", "scripts/bench", "README.md", "docs/prices.json",
  "dashboards/gistproxy-overview.json", "dashboards/alerts.yml", "tests/fixtures/chat/tool_outputs.request.json",
].filter((f) => fs.existsSync(path.join(SOURCE, f)));

// Deterministic: a failure names a string that reproduces.
function mulberry32(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pools = [
  "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", " ", "  ", "\n", "\r\n", "\t",
  "'s't're've'm'll'd'S'T'RE", ".,;:!?-_/\\()[]{}<>\"'`~@#$%^&*=+|", "ÀÉÎÕÜçñßøåæœ", "αβγδΕΖΗΘ", "абвгдЕЖЗИ",
  "日本語中文漢字한국어ひらがなカタカナ", "０１２３ＡＢＣ", "١٢٣٤أبتث", "हिन्दी", "ไทย", "\u0301\u0308\u0327",
  "\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000\u0085\u000b\u000c\u180e\u200b\ufeff",
  "😀👍🏽👩‍💻🇯🇵❤️", "½²³Ⅻ", "ﬁﬂſK",
];

function randomString(rand) {
  const parts = [];
  const n = 1 + Math.floor(rand() * 60);
  for (let i = 0; i < n; i++) {
    const pool = [...pools[Math.floor(rand() * pools.length)]];
    const run = 1 + Math.floor(rand() * (rand() < 0.1 ? 40 : 6));
    for (let k = 0; k < run; k++) parts.push(pool[Math.floor(rand() * pool.length)]);
  }
  return parts.join("");
}

function gistproxyCounts(tokenizer, files) {
  const out = execFileSync(`${BUILD}/gistproxy`, ["tokens", "--json", "--tokenizer", tokenizer, ...files],
    { maxBuffer: 64 << 20 });
  const json = JSON.parse(out.toString());
  return json.files.map((f) => f.tokens);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gistproxy-tokens-"));
const rand = mulberry32(20261124);
const randomFiles = [];
for (let i = 0; i < 400; i++) {
  const f = path.join(dir, `random-${i}.txt`);
  fs.writeFileSync(f, randomString(rand));
  randomFiles.push(f);
}

for (const [name, flag] of [["o200k_base", "o200k"], ["cl100k_base", "cl100k"]]) {
  test(`${name}: the corpus counts exactly as npm tiktoken`, () => {
    const enc = get_encoding(name);
    try {
      const files = corpusFiles.map((f) => path.join(SOURCE, f));
      const ours = gistproxyCounts(flag, files);
      files.forEach((f, i) => {
        const text = fs.readFileSync(f, "utf8");
        assert.equal(ours[i], enc.encode_ordinary(text).length, `${corpusFiles[i]} (${name})`);
      });
    } finally {
      enc.free();
    }
  });

  test(`${name}: 400 seeded random strings count exactly as npm tiktoken`, () => {
    const enc = get_encoding(name);
    try {
      const ours = gistproxyCounts(flag, randomFiles);
      randomFiles.forEach((f, i) => {
        const text = fs.readFileSync(f, "utf8");
        assert.equal(ours[i], enc.encode_ordinary(text).length, `${f}: ${JSON.stringify(text)}`);
      });
    } finally {
      enc.free();
    }
  });
}

test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
