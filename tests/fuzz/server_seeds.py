#!/usr/bin/env python3
"""Writes the seed corpus of server_fuzz (tests/fuzz/corpus/server_fuzz): one
seed per class of hardening round 4, in the target's op language (see
server_fuzz.cpp): a mode byte, then ops.

  tests/fuzz/server_seeds.py   (rewrites the seeds in place)
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "server_fuzz")
CLEAR, TLS_INSIDE, TLS_RECORDS = 0, 1, 2


def lit(b):
    """Literal bytes, in ops of at most 65,535."""
    out = b""
    for at in range(0, len(b), 65535):
        part = b[at:at + 65535]
        out += bytes([1]) + struct.pack(">H", len(part)) + part
    return out


def rep(byte, count):
    """`count` copies of one byte (count even, at most 131,070)."""
    assert count % 2 == 0 and count <= 131070
    return bytes([2, byte]) + struct.pack(">H", count // 2)


def pause(ms=5):
    return bytes([3, ms])


RST_CLOSE, HALF_CLOSE = bytes([4]), bytes([5])


def frame(kind, flags, stream, payload_ops, length):
    """A frame header as a literal, its payload as ops producing `length` bytes."""
    return lit(struct.pack(">I", length)[1:] + bytes([kind, flags]) + struct.pack(">I", stream)) + payload_ops


def plain_frame(kind, flags, stream, payload=b""):
    return frame(kind, flags, stream, lit(payload) if payload else b"", len(payload))


PREFACE = lit(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + plain_frame(4, 0, 0)


def literal_field(name_index, value):
    """HPACK literal without indexing, indexed name, short value."""
    return bytes([name_index, len(value)]) + value


def get(stream, path=b"/hang"):
    block = b"\x82\x86" + literal_field(4, path) + literal_field(1, b"127.0.0.1")
    return plain_frame(1, 0x5, stream, block)


def post_head(stream, path=b"/v1/chat/completions"):
    block = b"\x83\x86" + literal_field(4, path) + literal_field(1, b"127.0.0.1")
    return plain_frame(1, 0x4, stream, block)


def big_field_block(stream, name, sizes):
    """HEADERS + CONTINUATIONs: GET / plus one literal field per size (new
    name, no Huffman), values repeated 'a'; cut into 16 KiB frames."""
    pieces = [b"\x82\x86" + literal_field(4, b"/v1/models") + literal_field(1, b"x")]
    for size in sizes:
        length = b""
        if size < 127:
            length = bytes([size])
        else:
            length, rest = bytes([127]), size - 127
            while rest >= 128:
                length += bytes([0x80 | (rest & 0x7F)])
                rest >>= 7
            length += bytes([rest])
        pieces.append(("LIT", b"\x00" + bytes([len(name)]) + name + length))
        pieces.append(("REP", size))
    # Lay the block out as (literal | repeat) runs, then cut it into frames.
    runs = []
    for p in pieces:
        runs.append(p if isinstance(p, tuple) else ("LIT", p))
    total = sum(len(r[1]) if r[0] == "LIT" else r[1] for r in runs)
    out, at, first = b"", 0, True
    while at < total:
        take = min(16384, total - at)
        last = at + take == total
        kind, flags = (1, 0x1) if first else (9, 0)
        if last:
            flags |= 0x4
        ops, cursor = b"", 0  # ops covering [at, at+take) of the runs
        for r in runs:
            size = len(r[1]) if r[0] == "LIT" else r[1]
            lo, hi = max(at, cursor), min(at + take, cursor + size)
            if lo < hi:
                if r[0] == "LIT":
                    ops += lit(r[1][lo - cursor:hi - cursor])
                else:
                    n = hi - lo
                    if n % 2:
                        ops += lit(b"a")
                        n -= 1
                    if n:
                        ops += rep(ord("a"), n)
            cursor += size
        out += frame(kind, flags, stream, ops, take)
        at += take
        first = False
    return out


def seed(name, mode, ops):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([mode]) + ops)


def main():
    os.makedirs(OUT, exist_ok=True)
    field_64k = lit(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ") + rep(ord("a"), 65600) + lit(b"\r\n\r\n")
    seed("http1-field-over-64k", CLEAR, field_64k + pause())
    seed("tls-http1-field-over-64k", TLS_INSIDE, field_64k + pause())
    seed("http1-keepalive-two", CLEAR, lit(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n" * 2 +
                                           b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                           b"5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n"))
    other_open = get(1, b"/hang")
    seed("h2-field-over-limit", CLEAR, PREFACE + other_open + big_field_block(3, b"x-big", [65534]) + pause())
    seed("tls-h2-field-over-limit", TLS_INSIDE, PREFACE + other_open + big_field_block(3, b"x-big", [65534]) + pause())
    seed("h2-cookie-crumbs", CLEAR, PREFACE + other_open + big_field_block(3, b"cookie", [30000, 30000, 30000]) + pause())
    overflow = struct.pack(">I", 0x7FFFFFFF)
    made_you_reset = b"".join(get(1 + 2 * i) + plain_frame(8, 0, 1 + 2 * i, overflow) for i in range(260))
    seed("h2-made-you-reset", CLEAR, PREFACE + made_you_reset + pause(20))
    reset_with_headers = b"".join(get(1 + 2 * i) + plain_frame(3, 0, 1 + 2 * i, struct.pack(">I", 8)) for i in range(60))
    seed("h2-reset-in-headers-read", CLEAR, PREFACE + reset_with_headers + pause())
    rapid = b"".join(get(1 + 2 * i) + pause(0) + plain_frame(3, 0, 1 + 2 * i, struct.pack(">I", 8)) for i in range(220))
    seed("h2-rapid-reset", CLEAR, PREFACE + rapid)
    past_limit = b"".join(get(1 + 2 * i) for i in range(110))
    seed("h2-streams-past-limit", CLEAR, PREFACE + past_limit + pause(20) + RST_CLOSE)
    budget = b"".join(post_head(1 + 2 * i) + plain_frame(0, 0, 1 + 2 * i, b"b" * 200) for i in range(5))
    seed("h2-bodies-and-half-close", CLEAR, PREFACE + budget + pause() + HALF_CLOSE)
    seed("tls-records-oversized", TLS_RECORDS, lit(b"\x16\x03\x01\xff\xff" + b"\x01" * 300))


if __name__ == "__main__":
    main()
