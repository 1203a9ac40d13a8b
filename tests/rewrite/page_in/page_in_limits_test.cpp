// read_blob arguments are the model's, and prompt injection steers the model:
// patterns run in linear time and bounded memory, and every page honours the
// page limit on whole characters and says how to read on.
#include <catch2/catch.hpp>

#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/page_in/page_in.hpp"
#include "rewrite/text/utf8.hpp"

using namespace gistproxy::rewrite;

namespace {

struct stored {
  memory_blob_store store{[] { return std::int64_t(100); }};
  std::string hash;
  explicit stored(const std::string& bytes, std::string kind = "log") {
    hash = sha256_hex(bytes);
    store.put(bytes, {hash, bytes.size(), std::move(kind), 0, "t", "tool"});
  }
  page_result read(page_request q, std::uint64_t page = 256 * 1024) {
    q.handle = hash;
    return page_in(store, "t", q, page_limits::with_page(page));
  }
};

page_request pattern(std::string p) {
  page_request q;
  q.pattern = std::move(p);
  return q;
}

// The offset the answer says to read on from, or -1.
std::int64_t read_on_offset(const std::string& text) {
  auto at = text.rfind("offset=");
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + 7));
}

}  // namespace

TEST_CASE("hostile patterns get a tool error or a bounded answer, never a crash or a stall") {
  std::string log;
  for (int i = 0; i < 2000; ++i) log += "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa line " + std::to_string(i) + "\n";
  stored s(log);
  SECTION("40 KB of nested parentheses") {
    auto r = s.read(pattern(std::string(20000, '(') + std::string(20000, ')')));
    CHECK_FALSE(r.ok);
    CHECK(r.text.find("at most 1024") != std::string::npos);
  }
  SECTION("deep nesting within the length limit") {
    auto r = s.read(pattern(std::string(500, '(') + "a" + std::string(500, ')')));
    CHECK_NOTHROW(r.text);
  }
  SECTION("a backreference") {
    auto r = s.read(pattern("(a*)*\\1b"));
    CHECK_FALSE(r.ok);
    CHECK(r.text.find("bad pattern") != std::string::npos);
    CHECK(r.text.find("RE2") != std::string::npos);
  }
  SECTION("counted repetition that would need gigabytes") {
    auto r = s.read(pattern("((a{1000}){1000}){1000}"));
    CHECK_FALSE(r.ok);
    CHECK(r.text.find("bad pattern") != std::string::npos);
  }
  SECTION("catastrophic backtracking shapes run in linear time") {
    auto r = s.read(pattern("(a+)+$x"));
    CHECK(r.ok);
    CHECK(r.text.find("[0 of 2000 lines match") == 0);
  }
  SECTION("the caller's time budget stops a search and says so") {
    page_request q = pattern("line");
    q.handle = s.hash;
    auto limits = page_limits::with_page(256 * 1024);
    limits.out_of_time = [] { return true; };
    auto r = page_in(s.store, "t", q, limits);
    CHECK(r.ok);
    CHECK(r.text.find("search stopped at line 1024 of 2000") != std::string::npos);
  }
}

TEST_CASE("a page cut inside a multi-byte character moves back to a whole character") {
  std::string text;
  while (text.size() < 10000) text += "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";  // é € 😀, no newlines
  stored s(text);
  for (std::uint64_t page : {1000, 1001, 1002, 1003}) {
    auto r = s.read({}, page);
    REQUIRE(r.ok);
    CHECK(text::is_valid_utf8(r.text));
    CHECK(r.bytes_returned <= page);
  }
}

TEST_CASE("reading on with the offset each page names gives back the exact bytes") {
  std::string text;
  for (int i = 0; text.size() < 50000; ++i)
    text += (i % 7 == 0 ? std::string(3000, 'L') : "line \xe2\x82\xac " + std::to_string(i)) + "\n";
  stored s(text);
  std::string rebuilt;
  page_request q;
  for (int pages = 0; pages < 1000; ++pages) {
    auto r = s.read(q, 1000);
    REQUIRE(r.ok);
    CHECK(text::is_valid_utf8(r.text));
    rebuilt += r.text.substr(0, r.bytes_returned);
    auto next = read_on_offset(r.text);
    if (next < 0) break;
    q.offset = next;
  }
  CHECK(rebuilt == text);
}

TEST_CASE("a line range whose one line is 1 MiB honours the page limit and says where to read on") {
  std::string text = "first\n" + std::string(1 << 20, 'x') + "\nlast\n";
  stored s(text);
  page_request q;
  q.start_line = 2;
  q.end_line = 2;
  auto r = s.read(q, 4096);
  REQUIRE(r.ok);
  CHECK(r.text.size() < 4096 + 300);
  CHECK(read_on_offset(r.text) == std::int64_t(6 + r.bytes_returned));
  auto m = s.read(pattern("^x+$"), 4096);
  REQUIRE(m.ok);
  CHECK(m.text.size() < 4096 + 300);
  CHECK(m.text.find("offset=") != std::string::npos);
}

TEST_CASE("a binary blob pages back as base64 of its exact bytes") {
  std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + std::string(100, '\xff');
  stored s(png, "image/png");
  auto r = s.read({});
  REQUIRE(r.ok);
  CHECK(r.text.rfind("[read_blob: image/png, 108 bytes, as base64]\n", 0) == 0);
  std::string decoded;
  REQUIRE(base64_decode(r.text.substr(r.text.find('\n') + 1), decoded));
  CHECK(decoded == png);
}

TEST_CASE("numeric arguments are clamped, not trusted") {
  std::string error;
  auto r = parse_page_request(R"({"handle":"abcdef0123456789","start_line":1e300,"end_line":-1e300,"offset":"12x"})", error);
  CHECK_FALSE(r);
  CHECK(error.find("offset") != std::string::npos);
  error.clear();
  auto ok = parse_page_request(R"({"handle":"abcdef0123456789","start_line":1e300,"end_line":-9223372036854775808})", error);
  REQUIRE(ok);
  CHECK(*ok->start_line <= (std::int64_t(1) << 53));
}
