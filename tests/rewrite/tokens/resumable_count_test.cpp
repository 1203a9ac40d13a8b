// A count resumed at a mark is the count of the whole text, for texts that
// share any number of first bytes, whitespace runs and non-ASCII included.
#include <catch2/catch.hpp>

#include <string>

#include "rewrite/json/walk_reuse.hpp"
#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "rewrite/tokens/resumable_count.hpp"

using namespace gistproxy::rewrite;

namespace {

struct rng {
  std::uint64_t s;
  std::uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return std::uint32_t(s >> 33);
  }
};

// Pieces chosen so that cuts fall everywhere a tokenizer could care:
// whitespace runs before newlines, contractions, digit runs, JSON, UTF-8.
std::string random_text(rng& r, std::size_t bytes) {
  static const char* parts[] = {"the", " ", "  ", "\n", "   \n", "\t", "don't", "'ll", "12345678", "{\"role\":\"user\",",
                                "},{", "\\n", "déjà", "日本語", "Ünïcödé", "x_y", "ABCdef", "//", "!!!", "\r\n", "          ",
                                "a", "A", "0", ",", "\"", "é"};
  std::string s;
  while (s.size() < bytes) s += parts[r.next() % (sizeof parts / sizeof *parts)];
  return s;
}

void check_resumes(const token_estimator& e, std::uint64_t seed) {
  rng r{seed};
  std::size_t resumed = 0;
  for (int round = 0; round < 300; ++round) {
    const auto first = random_text(r, 200 + r.next() % 3000);
    std::vector<tokens::count_mark> marks;
    const auto a = tokens::count_resuming(e, first, content_kind::text, marks, 0, 1 + r.next() % 200);
    REQUIRE(a.tokens == e.estimate(first, content_kind::text));
    // The next text: a cut of the first anywhere, then other bytes.
    const auto cut = r.next() % (first.size() + 1);
    const auto second = first.substr(0, cut) + random_text(r, r.next() % 400);
    const auto same = json::common_prefix(first, second);
    INFO("round " << round << ", cut " << cut << ", same " << same);
    const auto b = tokens::count_resuming(e, second, content_kind::text, marks, same, 64);
    CHECK(b.tokens == e.estimate(second, content_kind::text));
    CHECK(b.read_from <= same);
    resumed += b.read_from > 0;
    // And again from the second's marks, to an unrelated text.
    const auto third = random_text(r, 500);
    const auto c = tokens::count_resuming(e, third, content_kind::text, marks, json::common_prefix(second, third), 64);
    CHECK(c.tokens == e.estimate(third, content_kind::text));
  }
  CHECK(resumed > 100);  // most rounds did resume: the test measures resuming, not recounting
}

}  // namespace

TEST_CASE("tokens: a resumed count is the whole text's count", "[tokens][replay]") {
  std::string error;
  for (auto name : {"o200k_base", "cl100k_base"}) {
    INFO(name);
    auto t = tokens::builtin_tokenizer(name, &error);
    REQUIRE(t);
    check_resumes(*t, 7);
  }
  check_resumes(char_ratio_estimator(), 11);
}

// Every cut of a text right at (or just past) a mark, then letters that
// would join the piece before the cut: a mark is taken only where the bytes
// after it are shared far enough to decide that piece.
TEST_CASE("tokens: a count resumes only at a mark the shared bytes decide", "[tokens][replay]") {
  std::string error;
  auto t = tokens::builtin_tokenizer("o200k_base", &error);
  REQUIRE(t);
  rng r{3};
  const auto first = random_text(r, 3000);
  std::vector<tokens::count_mark> all;
  tokens::count_resuming(*t, first, content_kind::text, all, 0, 1);
  REQUIRE(all.size() > 100);
  for (const auto& m : all)
    for (std::size_t past : {0, 1, 2, 3}) {
      if (m.at + past > first.size()) continue;
      const auto second = first.substr(0, m.at + past) + "zzq'll xyz";
      auto marks = all;
      INFO("mark at " << m.at << ", cut " << past << " past it");
      CHECK(tokens::count_resuming(*t, second, content_kind::text, marks, json::common_prefix(first, second), 1).tokens ==
            t->estimate(second, content_kind::text));
    }
}

TEST_CASE("tokens: a mark is never taken from bytes whose pieces later bytes decide", "[tokens][replay]") {
  std::string error;
  auto t = tokens::builtin_tokenizer("o200k_base", &error);
  REQUIRE(t);
  // A newline then spaces: one piece or two, decided by what follows the run.
  const std::string run(300, ' ');
  const std::string a = "abc,def\n" + run + "xyz, more text here";
  const std::string b = "abc,def\n" + run + "\nxyz, more text here";
  std::vector<tokens::count_mark> marks;
  tokens::count_resuming(*t, a, content_kind::text, marks, 0, 1);
  const auto same = json::common_prefix(a, b);
  CHECK(tokens::count_resuming(*t, b, content_kind::text, marks, same, 1).tokens == t->estimate(b, content_kind::text));
}
