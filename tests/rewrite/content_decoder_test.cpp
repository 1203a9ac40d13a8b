// Compressed upstream answers are decoded exactly, as they stream, a bounded
// amount at a time, and refused when they are not what their coding says.
#include <catch2/catch.hpp>
#include <zstd.h>

#include <random>

#include "rewrite/content_decoder.hpp"
#include "tests/support/http_compression.hpp"

using namespace gistproxy::rewrite;
namespace support = gistproxy::testing;

namespace {

std::string sse_events(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":" + std::to_string(i) +
         ",\"delta\":{\"type\":\"text_delta\",\"text\":\"token " + std::to_string(i * 7919 % 1000) + "\"}}\n\n";
  return s;
}

// Feeds `compressed` in pieces of `piece` bytes, decoding at most `step` bytes a call.
struct streamed {
  std::string out;
  bool ok = true;
  bool complete = false;
  std::size_t largest_step = 0;
};
streamed decode_in_pieces(content_coding coding, std::string_view compressed, std::size_t piece, std::size_t step) {
  content_decoder d(coding);
  streamed r;
  for (std::size_t at = 0; r.ok && at < compressed.size(); at += piece) {
    d.feed(compressed.substr(at, piece));
    while (r.ok && d.pending()) {
      const auto before = r.out.size();
      r.ok = d.decode(r.out, step);
      r.largest_step = std::max(r.largest_step, r.out.size() - before);
    }
  }
  r.complete = r.ok && d.complete();
  return r;
}

content_coding coding_of(const std::string& name) { return *parse_content_coding(name); }

}  // namespace

TEST_CASE("every coding decodes to the exact bytes whole and piece by piece") {
  const std::string name = GENERATE(as<std::string>{}, "gzip", "deflate", "br", "zstd");
  const std::string body = sse_events(400);
  support::stream_compressor c(name);
  std::string compressed;
  // Flushed event by event, as a streaming API sends it.
  for (std::size_t at = 0; at < body.size(); at += 300) compressed += c.flush(std::string_view(body).substr(at, 300));
  compressed += c.finish();

  CHECK(content_decoder::decode_whole(coding_of(name), compressed, 1 << 20) == body);
  const std::size_t piece = GENERATE(1, 7, 1500, 1 << 20);
  auto r = decode_in_pieces(coding_of(name), compressed, piece, 333);
  CHECK(r.ok);
  CHECK(r.complete);
  CHECK(r.out == body);
  CHECK(r.largest_step <= 333);
}

TEST_CASE("gzip members after the first and raw deflate are decoded too") {
  const std::string body = sse_events(10);
  SECTION("two gzip members (RFC 1952 2.2)") {
    const auto two = support::compress("gzip", body) + support::compress("gzip", "and more");
    CHECK(content_decoder::decode_whole(content_coding::gzip, two, 1 << 20) == body + "and more");
  }
  SECTION("deflate without the zlib wrapper, as some servers send it") {
    auto zlib_format = support::compress("deflate", body);
    // Strip the 2-byte zlib header and the 4-byte Adler-32 trailer: raw deflate.
    const std::string raw = zlib_format.substr(2, zlib_format.size() - 6);
    CHECK(content_decoder::decode_whole(content_coding::deflate, raw, 1 << 20) == body);
    CHECK(decode_in_pieces(content_coding::deflate, raw, 1, 50).out == body);
  }
}

TEST_CASE("a compressed answer cut short, followed by garbage or corrupt is never taken as whole") {
  const std::string name = GENERATE(as<std::string>{}, "gzip", "deflate", "br", "zstd");
  const auto compressed = support::compress(name, sse_events(50));
  SECTION("cut short") {
    const auto cut = compressed.substr(0, compressed.size() - 3);
    CHECK_FALSE(content_decoder::decode_whole(coding_of(name), cut, 1 << 20));
    CHECK_FALSE(decode_in_pieces(coding_of(name), cut, 64, 4096).complete);
  }
  SECTION("garbage after the end") {
    CHECK_FALSE(content_decoder::decode_whole(coding_of(name), compressed + "HTTP/1.1 200 OK\r\n", 1 << 20));
  }
  SECTION("flipped bytes") {
    std::string corrupt = compressed;
    for (std::size_t i = 4; i < corrupt.size(); i += 5) corrupt[i] = char(corrupt[i] ^ 0x5a);
    auto r = decode_in_pieces(coding_of(name), corrupt, 64, 4096);
    CHECK_FALSE((r.ok && r.complete && r.out == sse_events(50)));
  }
  SECTION("an empty body is an empty answer in any coding") {
    CHECK(content_decoder::decode_whole(coding_of(name), "", 1 << 20) == "");
  }
}

TEST_CASE("a decompression bomb is decoded a bounded step at a time and refused whole past the limit") {
  const std::string name = GENERATE(as<std::string>{}, "gzip", "br", "zstd");
  const std::string zeros(64u << 20, '\0');
  const auto bomb = support::compress(name, zeros);
  REQUIRE(bomb.size() < (1u << 20));
  CHECK_FALSE(content_decoder::decode_whole(coding_of(name), bomb, 1 << 20));
  content_decoder d(coding_of(name));
  d.feed(bomb);
  std::string out;
  REQUIRE(d.decode(out, 65536));
  CHECK(out.size() == 65536);  // one step, however much the input stands for
  CHECK(d.pending());
}

TEST_CASE("a zstd frame asking for a window over 8 MiB is refused") {
  std::mt19937 rng(7);
  std::string noise(9u << 20, '\0');
  for (auto& c : noise) c = char(rng());
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 24);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  std::string out(ZSTD_compressBound(noise.size()), '\0');
  ZSTD_inBuffer in{noise.data(), noise.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  REQUIRE(ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end) == 0);  // no pledged size: the header names the window
  ZSTD_freeCCtx(cctx);
  out.resize(o.pos);
  CHECK_FALSE(content_decoder::decode_whole(content_coding::zstd, out, 16u << 20));
}

TEST_CASE("Content-Encoding names one coding gistproxy decodes, or nothing it accepts") {
  CHECK(parse_content_coding("gzip") == content_coding::gzip);
  CHECK(parse_content_coding(" X-GZIP ") == content_coding::gzip);
  CHECK(parse_content_coding("deflate") == content_coding::deflate);
  CHECK(parse_content_coding("br") == content_coding::br);
  CHECK(parse_content_coding("ZSTD") == content_coding::zstd);
  CHECK(parse_content_coding("") == content_coding::identity);
  CHECK(parse_content_coding("identity") == content_coding::identity);
  CHECK_FALSE(parse_content_coding("compress"));
  CHECK_FALSE(parse_content_coding("gzip, br"));  // two codings applied in turn
  CHECK_FALSE(parse_content_coding("snappy"));
}

TEST_CASE("the upstream is asked only for codings gistproxy decodes, in the client's order and weights") {
  CHECK(decodable_accept_encoding("gzip, deflate") == "gzip, deflate");                      // Node SDKs
  CHECK(decodable_accept_encoding("gzip, deflate, br, zstd") == "gzip, deflate, br, zstd");  // Claude Code
  CHECK(decodable_accept_encoding("br;q=1.0, compress, snappy;q=0.5, gzip;q=0.8") == "br;q=1.0, gzip;q=0.8");
  CHECK(decodable_accept_encoding("*") == "gzip, deflate, br, zstd");
  CHECK(decodable_accept_encoding("compress") == "identity");
  CHECK(decodable_accept_encoding("") == "identity");
  CHECK(decodable_accept_encoding(std::nullopt) == "identity");  // no field: any coding would be allowed
  CHECK(decodable_accept_encoding("identity") == "identity");
}
