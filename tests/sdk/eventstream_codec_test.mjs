// gistproxy's event-stream codec (rewrite/eventstream, through the
// gistproxy-eventstream-tool filter) against the AWS SDK's own,
// @smithy/eventstream-codec (what every AWS JS client, Bedrock's included,
// frames and unframes with). Seeded random messages with every header type,
// empty and large payloads: smithy encodes and gistproxy decodes to the same
// headers (type and raw bytes) and payload, and re-encodes them byte for
// byte; gistproxy encodes and smithy decodes to the values it was given; a
// corrupted stream is refused by both.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { EventStreamCodec, Int64 } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";

const BUILD = process.env.GISTPROXY_BUILD;
if (!BUILD) throw new Error("GISTPROXY_BUILD must name the build directory");
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const hex = (bytes) => Buffer.from(bytes).toString("hex");

function tool(mode, input) {
  const r = spawnSync(`${BUILD}/gistproxy-eventstream-tool`, [mode], { input, maxBuffer: 256 << 20 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

// Deterministic: a failure names a seed and a message index that reproduce.
function mulberry32(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = 0x5eed1e;

function generator(rand) {
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const bytes = (n) => Uint8Array.from({ length: n }, () => int(0, 255));
  const pools = ["abcxyz", "ABC-_:.", "0123456789", "éßø", "日本語", "😀👍🏽", "{}\"\\\n\t"];
  const text = (maxBytes) => {
    let s = "";
    for (let n = int(0, 40); n > 0; n--) {
      const pool = [...pools[int(0, pools.length - 1)]];
      const next = s + pool[int(0, pool.length - 1)].repeat(int(1, rand() < 0.05 ? 4000 : 8));
      if (Buffer.byteLength(next) > maxBytes) break;
      s = next;
    }
    return s;
  };
  const be = (value, size) => BigInt.asUintN(size * 8, BigInt(value)).toString(16).padStart(size * 2, "0");
  const size = () => [0, int(1, 64), int(100, 4000), int(30000, 32767)][int(0, rand() < 0.1 ? 3 : 2)];

  // One header: smithy's form ({type, value}) and the wire's (type code, value bytes in hex).
  const header = () => {
    switch (int(0, 8)) {
      case 0: { const v = rand() < 0.5; return [{ type: "boolean", value: v }, v ? 0 : 1, ""]; }
      case 1: { const v = int(-128, 127); return [{ type: "byte", value: v }, 2, be(v, 1)]; }
      case 2: { const v = int(-32768, 32767); return [{ type: "short", value: v }, 3, be(v, 2)]; }
      case 3: { const v = int(-(2 ** 31), 2 ** 31 - 1); return [{ type: "integer", value: v }, 4, be(v, 4)]; }
      case 4: { const b = bytes(8); return [{ type: "long", value: new Int64(b) }, 5, hex(b)]; }
      case 5: { const b = bytes(size()); return [{ type: "binary", value: b }, 6, hex(b)]; }
      case 6: { const s = text(32767); return [{ type: "string", value: s }, 7, hex(fromUtf8(s))]; }
      case 7: { const ms = int(-8.64e15, 8.64e15); return [{ type: "timestamp", value: new Date(ms) }, 8, be(ms, 8)]; }
      default: {
        const h = hex(bytes(16));
        const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
        return [{ type: "uuid", value: uuid }, 9, h];
      }
    }
  };

  // Names are unique and never integer-like: smithy's headers are an object,
  // whose integer keys would be iterated first, out of wire order.
  const name = (i) => {
    const fixed = [":event-type", ":content-type", ":message-type", ":exception-type"];
    if (i < fixed.length && rand() < 0.5) return fixed[i];
    return rand() < 0.05 ? `h${i}-`.padEnd(255, "n") : `h${i}-${text(int(0, 40))}`;  // 255 bytes: the longest name
  };

  let count = 0;
  return () => {
    const smithy = {}, wire = [];
    for (let i = 0, n = int(0, 12); i < n; i++) {
      const [value, type, valueHex] = header();
      const key = name(i);
      smithy[key] = value;
      wire.push({ name: hex(fromUtf8(key)), type, value: valueHex });
    }
    // Every 50th payload is large (100 KiB..1 MiB); the others empty, small or a text.
    const body = ++count % 50 === 0 ? bytes(int(100000, 1 << 20))
      : [() => new Uint8Array(0), () => bytes(int(1, 300)), () => fromUtf8(text(20000))][int(0, 2)]();
    return { smithy: { headers: smithy, body }, wire: { headers: wire, payload: hex(body) } };
  };
}

function randomMessages(count, seed = SEED) {
  const next = generator(mulberry32(seed));
  return Array.from({ length: count }, next);
}

// Splits a stream into messages by their total length, as a transport does.
function frames(stream) {
  const out = [];
  for (let at = 0; at < stream.length;) {
    const total = stream.readUInt32BE(at);
    out.push(new Uint8Array(stream.subarray(at, at + total)));
    at += total;
  }
  return out;
}

// A smithy-decoded header value, comparable with what was encoded.
function comparable({ type, value }) {
  if (type === "long") return hex(value.bytes);
  if (type === "binary") return hex(value);
  if (type === "timestamp") return value.getTime();
  return value;
}

test("messages smithy encodes decode in gistproxy to the same headers and payload, and encode back byte for byte", () => {
  const messages = randomMessages(300);
  const stream = Buffer.concat(messages.map((m) => codec.encode(m.smithy)));
  const decoded = tool("decode", stream);
  assert.equal(decoded.status, 0, decoded.stderr);
  const lines = decoded.stdout.toString().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  assert.equal(lines.length, messages.length);
  lines.forEach((got, i) => assert.deepEqual(got, messages[i].wire, `seed ${SEED}, message ${i}`));

  const reencoded = tool("encode", decoded.stdout);
  assert.equal(reencoded.status, 0, reencoded.stderr);
  assert.ok(reencoded.stdout.equals(stream), "gistproxy's encoding differs from smithy's");
});

test("messages gistproxy encodes decode in smithy to the values they were made from", () => {
  const messages = randomMessages(300, SEED + 1);
  // Past what smithy's encoder allows (32767) but within the wire's u16: its decoder must still read them.
  const big = { name: hex(fromUtf8("big")), type: 7, value: hex(fromUtf8("s".repeat(65535))) };
  messages.push({ smithy: { headers: { big: { type: "string", value: "s".repeat(65535) } }, body: new Uint8Array(0) },
    wire: { headers: [big], payload: "" } });
  const input = messages.map((m) => JSON.stringify(m.wire)).join("\n") + "\n";
  const encoded = tool("encode", Buffer.from(input));
  assert.equal(encoded.status, 0, encoded.stderr);
  const decoded = frames(encoded.stdout).map((f) => codec.decode(f));
  assert.equal(decoded.length, messages.length);
  decoded.forEach((got, i) => {
    const want = messages[i].smithy;
    assert.deepEqual(Object.keys(got.headers), Object.keys(want.headers), `message ${i}: header names and order`);
    for (const [name, h] of Object.entries(want.headers)) {
      assert.equal(got.headers[name].type, h.type, `message ${i}, header ${name}`);
      assert.deepEqual(comparable(got.headers[name]), comparable(h), `message ${i}, header ${name}`);
    }
    assert.equal(hex(got.body), hex(want.body), `message ${i}: payload`);
  });
});

test("a corrupted message is refused by both codecs", () => {
  const [m] = randomMessages(1, SEED + 2);
  const good = Buffer.from(codec.encode({ headers: { ":event-type": { type: "string", value: "chunk" } }, body: fromUtf8('{"bytes":"e30="}') }));
  for (const at of [0, 3, 5, 9, 14, good.length - 6, good.length - 1]) {
    const bad = Buffer.from(good);
    bad[at] ^= 0x20;
    assert.throws(() => codec.decode(new Uint8Array(bad)), Error, `smithy accepted a flip at ${at}`);
    const ours = tool("decode", Buffer.concat([codec.encode(m.smithy), bad]));
    assert.equal(ours.status, 1, `gistproxy accepted a flip at ${at}`);
    assert.equal(ours.stdout.toString().split("\n").filter(Boolean).length, 1, "the message before it was still decoded");
  }
});
