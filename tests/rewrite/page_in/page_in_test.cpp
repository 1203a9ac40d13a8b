#include <catch2/catch.hpp>

#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/page_in/page_in.hpp"

using namespace gistproxy::rewrite;

namespace {

struct stored {
  std::int64_t now = 100;
  memory_blob_store store{[this] { return now; }};
  std::string hash;
  explicit stored(const std::string& bytes) {
    hash = sha256_hex(bytes);
    store.put(bytes, {hash, bytes.size(), "log", 0, "t", "run_tests"});
  }
};

std::string numbered_lines(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += (i % 10 == 0 ? "ERROR at step " : "ok step ") + std::to_string(i) + "\n";
  return s;
}

page_request req(std::string handle) {
  page_request r;
  r.handle = std::move(handle);
  return r;
}

}  // namespace

TEST_CASE("with no options, the exact bytes come back") {
  stored s(numbered_lines(50));
  auto r = page_in(s.store, "t", req(s.hash.substr(0, 16)), {});
  REQUIRE(r.ok);
  CHECK(r.text == numbered_lines(50));
  CHECK(r.mode == page_mode::full);
  CHECK(r.integrity_ok);
  CHECK(r.tool_name == "run_tests");
}

TEST_CASE("a blob over the page size returns its first page, ending on a line, and says how to read on") {
  stored s(numbered_lines(5000));
  auto r = page_in(s.store, "t", req(s.hash), page_limits::with_page(1000));
  REQUIRE(r.ok);
  auto body_end = r.text.find("\n[read_blob: bytes 0-");
  REQUIRE(body_end != std::string::npos);
  CHECK(r.text[body_end - 1] == '\n');
  CHECK(numbered_lines(5000).rfind(r.text.substr(0, body_end), 0) == 0);
  CHECK(r.text.find("start_line=") != std::string::npos);
}

TEST_CASE("a pattern returns matching lines, numbered, with context") {
  stored s(numbered_lines(40));
  auto q = req(s.hash);
  q.pattern = "ERROR at step (20|30)$";
  q.context_lines = 1;
  auto r = page_in(s.store, "t", q, {});
  REQUIRE(r.ok);
  CHECK(r.mode == page_mode::pattern);
  CHECK(r.text.find("[2 of 40 lines match") == 0);
  CHECK(r.text.find("19- ok step 19\n20: ERROR at step 20\n21- ok step 21\n--\n29- ok step 29\n30: ERROR at step 30\n") !=
        std::string::npos);
}

TEST_CASE("a line range returns those lines, numbered") {
  stored s(numbered_lines(40));
  auto q = req(s.hash);
  q.start_line = 9;
  q.end_line = 11;
  auto r = page_in(s.store, "t", q, {});
  REQUIRE(r.ok);
  CHECK(r.text == "[lines 9-11 of 40]\n9: ok step 9\n10: ERROR at step 10\n11: ok step 11\n");
  q.start_line = 90;
  q.end_line = 95;
  CHECK_FALSE(page_in(s.store, "t", q, {}).ok);
}

TEST_CASE("errors are sentences the model can act on") {
  stored s(numbered_lines(5));
  auto unknown = page_in(s.store, "t", req("0123456789abcdef"), {});
  CHECK_FALSE(unknown.ok);
  CHECK(unknown.error == blob_error::not_found);
  CHECK(unknown.text.find("no stored output has handle") != std::string::npos);
  auto other_tenant = page_in(s.store, "someone-else", req(s.hash), {});
  CHECK(other_tenant.error == blob_error::not_found);
  auto bad = req(s.hash);
  bad.pattern = "([unclosed";
  auto bad_regex = page_in(s.store, "t", bad, {});
  CHECK_FALSE(bad_regex.ok);
  CHECK(bad_regex.text.find("bad pattern") != std::string::npos);
  s.store.corrupt("t", s.hash);
  auto corrupt = page_in(s.store, "t", req(s.hash), {});
  CHECK_FALSE(corrupt.ok);
  CHECK_FALSE(corrupt.integrity_ok);
  CHECK(corrupt.hash.size() == 64);  // the corrupted blob is named for spans and the report
  CHECK(corrupt.text.find("integrity") != std::string::npos);
}

TEST_CASE("read_blob arguments are parsed strictly") {
  std::string error;
  auto ok = parse_page_request(R"({"handle":"ABCDEF0123456789","pattern":"x","start_line":"3","context_lines":2})", error);
  REQUIRE(ok);
  CHECK(ok->handle == "abcdef0123456789");
  CHECK(ok->start_line == 3);
  CHECK_FALSE(parse_page_request(R"({"pattern":"x"})", error));
  CHECK(error.find("handle") != std::string::npos);
  CHECK_FALSE(parse_page_request("not json", error));
}
