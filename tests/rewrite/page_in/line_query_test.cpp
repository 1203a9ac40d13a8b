// read_blob's query: BM25 over a blob's lines, on real tool outputs. Ranking is
// deterministic, returns line numbers, and ties go to the earlier line.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/page_in/line_query.hpp"
#include "rewrite/page_in/page_in.hpp"
#include "tests/support/fixture_files.hpp"

using namespace gistproxy::rewrite;
using gistproxy::testing::read_fixture;

namespace {

// The real `ls -R` output OpenHands got on astropy-12907 (a 30 KB listing).
std::string astropy_listing() {
  auto call = nlohmann::json::parse(read_fixture("traces/openhands__astropy-12907-call2.json"));
  for (const auto& m : call["messages"])
    if (m["role"] == "tool") return m["content"].is_string() ? m["content"].get<std::string>() : m["content"][0]["text"].get<std::string>();
  return {};
}

// A source file as Cline read it (numbered lines), from the real Cline history fixture.
std::string cline_source_file() {
  auto history = nlohmann::json::parse(read_fixture("traces/cline__api_conversation_history.json"));
  for (const auto& m : history)
    for (const auto& block : m["content"])
      if (block.is_object() && block.value("type", "") == "text" &&
          block.value("text", "").find("   1 | // Trace formats parse") != std::string::npos)
        return block["text"];
  return {};
}

// A 5,000-line service log: routine lines, a few warnings, three errors.
std::string service_log() {
  std::string log;
  for (int i = 1; i <= 5000; ++i) {
    std::string line = "2026-11-25T08:" + std::to_string(10 + i % 50) + " INFO http GET /api/items/" + std::to_string(i) +
                       " 200 " + std::to_string(3 + i % 17) + "ms";
    if (i % 700 == 0) line = "2026-11-25T08:30 WARN pool slow acquire " + std::to_string(i % 97) + "ms";
    if (i == 1234 || i == 3456 || i == 4321)
      line = "2026-11-25T08:31 ERROR db connection refused to postgres:5432 (attempt " + std::to_string(i % 5) + ")";
    log += line + "\n";
  }
  return log;
}

std::vector<std::size_t> numbers(const line_query_result& r) {
  std::vector<std::size_t> out;
  for (const auto& l : r.best) out.push_back(l.number);
  return out;
}

}  // namespace

TEST_CASE("query on a 5,000-line log: the error lines come first for the words of the error") {
  const auto log = service_log();
  auto r = rank_lines(log, "database connection refused error", 5);
  CHECK(r.lines == 5000);
  CHECK(r.terms == std::vector<std::string>{"database", "connection", "refused", "error"});
  REQUIRE(r.best.size() == 3);  // only three lines hold any of the words
  CHECK(numbers(r) == std::vector<std::size_t>{1234, 3456, 4321});
  CHECK(r.best[0].text.find("ERROR db connection refused") != std::string_view::npos);
  // Rare words outrank common ones: "slow" (7 lines) over "get" (about 4,990).
  auto slow = rank_lines(log, "GET slow", 3);
  for (const auto& l : slow.best) CHECK(l.text.find("slow acquire") != std::string_view::npos);
}

TEST_CASE("query on a real directory listing and a real source file") {
  const auto listing = astropy_listing();
  REQUIRE(listing.size() > 20000);
  auto r = rank_lines(listing, "cosmology tests", 5);
  REQUIRE_FALSE(r.best.empty());
  bool module_tests = false;
  for (const auto& l : r.best) {
    CHECK((l.text.find("cosmology") != std::string_view::npos || l.text.find("tests") != std::string_view::npos));
    module_tests |= l.text.find("/astropy/cosmology/tests:") != std::string_view::npos;  // CRLF lines
  }
  CHECK(module_tests);

  const auto source = cline_source_file();
  REQUIRE_FALSE(source.empty());
  auto s = rank_lines(source, "prefix stability system tools", 3);
  REQUIRE_FALSE(s.best.empty());
  bool found = false;
  for (const auto& l : s.best) found |= l.text.find("TEST_CASE(\\\"prefix stability") != std::string_view::npos ||
                                         l.text.find("TEST_CASE(\"prefix stability") != std::string_view::npos;
  CHECK(found);
}

TEST_CASE("query ranking is deterministic, ties go to the earlier line, and memory stays with the lines returned") {
  std::string same;
  for (int i = 0; i < 100; ++i) same += "alpha beta\n";
  auto r = rank_lines(same, "beta", 4);
  CHECK(numbers(r) == std::vector<std::size_t>{1, 2, 3, 4});
  CHECK(r.matching == 100);
  CHECK(rank_lines(same, "beta", 4).best.size() == 4);
  CHECK(rank_lines(same, "!!! ...", 4).terms.empty());
  CHECK(rank_lines("", "beta", 4).best.empty());
  // Case and punctuation do not matter; words over 64 bytes are cut the same way on both sides.
  auto c = rank_lines("x\nFooBar, baz\n", "foobar", 2);
  CHECK(numbers(c) == std::vector<std::size_t>{2});
  // A time budget that runs out stops the scan and says so.
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\n";
  auto stopped = rank_lines(big, "line", 3, [] { return true; });
  CHECK(stopped.out_of_time);
  CHECK(stopped.lines < 20000);
}

TEST_CASE("read_blob with query answers the best lines, numbered, through page_in") {
  memory_blob_store store([] { return std::int64_t(1000); });
  const auto log = service_log();
  const auto hash = sha256_hex(log);
  store.put(log, {hash, log.size(), "log", 0, "t", "tail"});
  std::string error;
  auto req = parse_page_request(R"({"handle":")" + hash.substr(0, 16) + R"(","query":"connection refused"})", error);
  REQUIRE(req);
  auto r = page_in(store, "t", *req, {});
  REQUIRE(r.ok);
  CHECK(r.mode == page_mode::query);
  CHECK(page_mode_name(r.mode) == "query");
  CHECK(r.text.rfind("[query \"connection refused\": best 3 of 3 matching lines (of 5000)", 0) == 0);
  CHECK(r.text.find("\n1234: 2026-11-25T08:31 ERROR db connection refused") != std::string::npos);
  CHECK(r.text.find("\n4321: ") != std::string::npos);
  auto none = page_in(store, "t", *parse_page_request(R"({"handle":")" + hash.substr(0, 16) + R"(","query":"kafka"})", error), {});
  CHECK(none.ok);
  CHECK(none.text.find("no line of the 5000 holds any of these words") != std::string::npos);
  auto empty = page_in(store, "t", *parse_page_request(R"({"handle":")" + hash.substr(0, 16) + R"(","query":"?!"})", error), {});
  CHECK_FALSE(empty.ok);
  CHECK(empty.text == "read_blob error: the query has no words to look for.");
}
