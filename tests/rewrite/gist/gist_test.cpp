#include <zlib.h>
#include <zstd.h>

#include <catch2/catch.hpp>

#include "rewrite/body_encoding.hpp"
#include "rewrite/gist/content_shape.hpp"
#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/base64.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("content kinds are told apart") {
  CHECK(classify_content(R"({"a": [1, 2, {"b": null}]})") == content_kind::json);
  CHECK(classify_content("2026-01-01 12:00:00 INFO start\n12:00:01 ERROR boom\n12:00:02 WARN x\n") == content_kind::log);
  CHECK(classify_content("#include <x>\nint main() {\n  return 0;\n}\n") == content_kind::source);
  CHECK(classify_content("Once upon a time\nthere was a proxy\nthat kept every byte\n") == content_kind::text);
  CHECK(classify_content("{not json") == content_kind::text);
}

TEST_CASE("token estimates: characters/4 for prose, /2 for JSON, counting code points") {
  char_ratio_estimator e;
  CHECK(e.estimate(std::string(400, 'a'), content_kind::text) == 100);
  CHECK(e.estimate(std::string(400, 'a'), content_kind::json) == 200);
  CHECK(count_code_points("\xC3\xA9\xF0\x9F\x98\x80") == 2);
  CHECK(count_lines("a\nb\n") == 2);
  CHECK(count_lines("a\nb") == 2);
  CHECK(count_lines("") == 0);
}

TEST_CASE("previews end on whole lines and never split a UTF-8 character") {
  std::size_t shown = 0;
  CHECK(preview_slice("one\ntwo\nthree\n", 9, false, shown) == "one\ntwo\n");
  CHECK(shown == 2);
  CHECK(preview_slice("one\ntwo\nthree\n", 7, true, shown) == "three\n");
  std::string long_line = std::string(10, 'x') + "\xE2\x9C\x93" + std::string(10, 'y');
  auto cut = preview_slice(long_line, 12, false, shown);
  CHECK(cut == std::string(10, 'x'));
}

TEST_CASE("a reference is deterministic and shows shape, preview and the handle once") {
  std::string bytes;
  for (int i = 0; i < 2000; ++i) bytes += "INFO line " + std::to_string(i) + "\n";
  bytes += "ERROR the last line\n";
  char_ratio_estimator e;
  auto shape = shape_of(bytes, e);
  std::string hash(64, 'a');
  reference_config cfg;
  auto a = render_reference(bytes, shape, "run_tests", hash, cfg);
  CHECK(a == render_reference(bytes, shape, "run_tests", hash, cfg));
  CHECK(a.find("tool: run_tests | kind: log | 2001 lines") != std::string::npos);
  CHECK(a.find("ERROR the last line") != std::string::npos);  // log tail
  CHECK(a.find("read_blob(\"aaaaaaaaaaaaaaaa\")") != std::string::npos);
  CHECK(a.find("aaaaaaaaaaaaaaaa", a.find("read_blob(\"") + 12) == std::string::npos);
  CHECK(a.size() < bytes.size() / 3);
}

TEST_CASE("gzip, deflate, br and zstd request bodies are decoded, others refused") {
  std::string text(100000, 'g');
  std::string out;
  // gzip
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string gz(deflateBound(&zs, text.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(text.data());
  zs.avail_in = uInt(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(gz.data());
  zs.avail_out = uInt(gz.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  gz.resize(zs.total_out);
  deflateEnd(&zs);
  CHECK(decode_body("gzip", gz, 1 << 20, out) == decode_status::ok);
  CHECK(out == text);
  CHECK(decode_body("gzip", gz, 1000, out) == decode_status::too_large);
  CHECK(decode_body("gzip", gz.substr(0, gz.size() / 2), 1 << 20, out) == decode_status::corrupt);
  // A gzip body of several members (RFC 1952 §2.2, what `cat a.gz b.gz` makes) decodes whole.
  CHECK(decode_body("gzip", gz + gz, 1 << 20, out) == decode_status::ok);
  CHECK(out == text + text);
  CHECK(decode_body("gzip", gz + gz.substr(0, gz.size() / 2), 1 << 20, out) == decode_status::corrupt);
  CHECK(decode_body("gzip", gz + "trailing garbage", 1 << 20, out) == decode_status::corrupt);
  // zstd
  std::string z(ZSTD_compressBound(text.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3));
  CHECK(decode_body("zstd", z, 1 << 20, out) == decode_status::ok);
  CHECK(out == text);
  CHECK(decode_body("compress", z, 1 << 20, out) == decode_status::unsupported);
  CHECK(decode_body("gzip, br", z, 1 << 20, out) == decode_status::unsupported);
  CHECK(decode_body("br", z, 1 << 20, out) == decode_status::corrupt);  // zstd bytes are not brotli
}

TEST_CASE("base64 round-trips") {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    std::string back;
    REQUIRE(base64_decode(base64_encode(s), back));
    CHECK(back == s);
  }
  std::string bad;
  CHECK_FALSE(base64_decode("!!!", bad));
}
