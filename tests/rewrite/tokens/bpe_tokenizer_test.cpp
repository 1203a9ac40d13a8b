// The exact tokenizer (rewrite/tokens): rank files, BPE merging, the
// pre-tokenisation regex, and counts against figures taken from the npm
// tiktoken package (tests/sdk/tokenizer_sdk_test.mjs compares a whole corpus).
#include <catch2/catch.hpp>

#include <random>
#include <thread>

#include "rewrite/tokens/bpe_merge.hpp"
#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "rewrite/tokens/embedded_ranks.hpp"
#include "rewrite/tokens/pretokenizer.hpp"
#include "rewrite/tokens/rank_table.hpp"

using namespace gistproxy::rewrite;
using namespace gistproxy::rewrite::tokens;

namespace {

std::string rank_file(const std::vector<std::string>& tokens, std::string pattern = "\\S+|\\s+") {
  std::string out = "gistproxy-bpe-ranks 1\nname toy\nsource test\npattern " + pattern + "\ncount " +
                    std::to_string(tokens.size()) + "\n\n";
  for (const auto& t : tokens) {
    out += char(t.size());
    out += t;
  }
  return out;
}

// All 256 single bytes first (ranks 0..255), then the merges given.
std::vector<std::string> with_bytes(std::vector<std::string> merges) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, char(b));
  tokens.insert(tokens.end(), merges.begin(), merges.end());
  return tokens;
}

const bpe_tokenizer& o200k() {
  static auto t = builtin_tokenizer("o200k_base", nullptr);
  return *t;
}

const bpe_tokenizer& cl100k() {
  static auto t = builtin_tokenizer("cl100k_base", nullptr);
  return *t;
}

}  // namespace

TEST_CASE("rank files: parsed, looked up, and every malformed shape refused") {
  std::string error;
  auto t = rank_table::parse(rank_file(with_bytes({"ab", "abc", "bc"})), &error);
  REQUIRE(t);
  CHECK(t->size() == 259);
  CHECK(t->name() == "toy");
  // Lookups return a key ordered as the ranks are.
  CHECK(t->rank_of("a") < t->rank_of("b"));
  CHECK(t->rank_of("\xFF") < t->rank_of("ab"));
  CHECK(t->rank_of("ab") < t->rank_of("abc"));
  CHECK(t->rank_of("abc") < t->rank_of("bc"));
  CHECK(t->rank_of("bc") != no_rank);
  CHECK(t->rank_of("abcd") == no_rank);
  CHECK(t->rank_of("") == no_rank);
  CHECK(t->rank_of(std::string(300, 'a')) == no_rank);
  // Two-byte tokens come from their own table: every pair is a token or not, as listed.
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      const std::string pair{char(a), char(b)};
      CHECK((t->rank_of(pair) != no_rank) == (pair == "ab" || pair == "bc"));
    }
  CHECK(t->rank_of("ab") > t->rank_of("\xFF"));

  const auto good = rank_file(with_bytes({"ab"}));
  CHECK_FALSE(rank_table::parse("", &error));
  CHECK_FALSE(rank_table::parse("gistproxy-bpe-ranks 2\n" + good.substr(good.find('\n') + 1), &error));
  CHECK_FALSE(rank_table::parse(good.substr(0, good.size() - 1), &error));  // truncated record
  CHECK(error == "truncated");
  CHECK_FALSE(rank_table::parse(good + "x", &error));
  CHECK(error == "trailing bytes");
  CHECK_FALSE(rank_table::parse(rank_file(with_bytes({"ab", "ab"})), &error));
  CHECK(error == "duplicate token");
  auto zero_length = good;
  zero_length[zero_length.size() - 3] = '\0';  // the "ab" record's length byte
  CHECK_FALSE(rank_table::parse(zero_length, &error));
  auto bad_count = good;
  bad_count.replace(bad_count.find("count 257"), 9, "count 2x7");
  CHECK_FALSE(rank_table::parse(bad_count, &error));
  CHECK(error == "bad count");
}

TEST_CASE("BPE merges the lowest-ranked pair first, the leftmost on a tie") {
  auto t = rank_table::parse(rank_file(with_bytes({"bc", "ab", "aa"})), nullptr);
  REQUIRE(t);
  // "abc": bc (256) merges before ab (257), then a+bc is not a token: 2 parts.
  CHECK(split_piece(*t, "abc") == std::vector<std::uint32_t>{0, 1, 3});
  // Whole-piece tokens count 1 without merging.
  CHECK(split_piece(*t, "ab") == std::vector<std::uint32_t>{0, 2});
  // "aaa": aa at 0 and at 1 tie; the leftmost merges: [aa][a].
  CHECK(split_piece(*t, "aaa") == std::vector<std::uint32_t>{0, 2, 3});
  merge_scratch s;
  CHECK(count_piece_tokens(*t, "", s) == 0);
  CHECK(count_piece_tokens(*t, "z", s) == 1);
  CHECK(count_piece_tokens(*t, "aaaa", s) == 2);
}

TEST_CASE("long pieces merge on a heap in exactly tiktoken's order") {
  // Above 128 bytes count_piece_tokens uses the heap; split_piece always runs
  // tiktoken's scan. Random pieces over a small alphabet with many merges.
  auto t = rank_table::parse(rank_file(with_bytes({"ab", "ba", "aa", "bb", "aba", "abab", "bab", "aaa", "abba",
                                                   "ca", "cab", "bca", "aab", "abc", "cc", "ccc", "cabab"})),
                             nullptr);
  REQUIRE(t);
  std::mt19937 rng(7);
  merge_scratch s;
  for (int i = 0; i < 300; ++i) {
    std::string piece(129 + rng() % 400, 'a');
    for (auto& c : piece) c = "abc"[rng() % 3];
    INFO(piece);
    CHECK(count_piece_tokens(*t, piece, s) == split_piece(*t, piece).size() - 1);
  }
  // And with the real o200k ranks on real text shapes.
  auto data = embedded_rank_data("o200k_base", nullptr);
  REQUIRE(data);
  auto real = rank_table::parse_static(*data, nullptr);
  REQUIRE(real);
  for (int i = 0; i < 100; ++i) {
    std::string piece(129 + rng() % 300, ' ');
    for (auto& c : piece) c = "etaoinshrdlu-=_.*#"[rng() % 18];
    INFO(piece);
    CHECK(count_piece_tokens(*real, piece, s) == split_piece(*real, piece).size() - 1);
  }
}

TEST_CASE("the pattern's white space classes become Unicode White_Space, inside and outside classes") {
  auto p = with_explicit_white_space("\\s+(?!\\S)|[^\\s\\p{L}]|\\\\s|[\\]\\s]");
  CHECK(p.rfind("[\\x{9}-\\x{D}", 0) == 0);  // \s+ at the start
  CHECK(p.find("\\S") == std::string::npos);
  CHECK(p.find("\\x{180E}") == std::string::npos);  // PCRE2's extra: not White_Space
  CHECK(p.find("[^\\x{9}-\\x{D}") != std::string::npos);                  // (?!\S)
  CHECK(p.find("[^\\x{9}-\\x{D}\\x{20}") != std::string::npos);          // [^\s...]: ranges inlined
  CHECK(p.find("\\\\s") != std::string::npos);                            // an escaped backslash stays
  CHECK(p.find("[\\]\\x{9}") != std::string::npos);                       // \] inside a class
  std::string error;
  CHECK(pretokenizer::compile(p, &error));
  CHECK_FALSE(pretokenizer::compile("(unclosed", &error));
  CHECK(error.find("does not compile") != std::string::npos);
}

TEST_CASE("o200k_base and cl100k_base count as npm tiktoken 1.0.22 does") {
  // Figures from get_encoding(name).encode_ordinary(text).length.
  const std::vector<std::string> texts = {"hello world", "Hello, world!", "  def foo(x):\n\treturn x**2\n",
                                          "東京都は日本の首都", "👩‍💻👍🏽", "I'M here, it's fine",
                                          "a\xE1\xA0\x8E" "b c",  // U+180E
                                          "x" + std::string(300, ' ') + "y", std::string(1000, 'A'),
                                          std::string(999, '-') + "\n", "1 2 3 4 5 6 7 8 9 10", "<|endoftext|>"};
  const std::vector<std::uint64_t> o200k_counts = {2, 4, 10, 6, 8, 6, 6, 5, 125, 16, 19, 7};
  const std::vector<std::uint64_t> cl100k_counts = {2, 4, 10, 10, 13, 7, 6, 5, 125, 16, 19, 7};
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO(texts[i]);
    CHECK(o200k().estimate(texts[i], content_kind::text) == o200k_counts[i]);
    CHECK(cl100k().estimate(texts[i], content_kind::text) == cl100k_counts[i]);
  }
  CHECK(o200k().name() == "o200k_base");
  CHECK(o200k().exact());
  CHECK(o200k().estimate("", content_kind::text) == 0);
}

TEST_CASE("hostile text: invalid UTF-8 and huge runs are counted, never more tokens than bytes") {
  std::mt19937 rng(11);
  for (int i = 0; i < 200; ++i) {
    std::string bytes(1 + rng() % 300, '\0');
    for (auto& c : bytes) c = char(rng());
    const auto n = o200k().estimate(bytes, content_kind::text);
    CHECK(n >= 1);
    CHECK(n <= o200k().max_tokens(bytes.size()));
  }
  CHECK(o200k().estimate("\xFF", content_kind::text) == 1);
  CHECK(o200k().estimate("ab\xC3(cd", content_kind::text) >= 3);
  // One megabyte of one character class is one piece: merged on the heap.
  CHECK(o200k().estimate(std::string(1 << 20, 'A'), content_kind::text) > 1000);
  CHECK(o200k().estimate(std::string(1 << 20, ' ') + "x", content_kind::text) > 100);
  CHECK(o200k().fallbacks() == 0);
}

TEST_CASE("the tokenizer choices of --tokenizer") {
  std::string error;
  CHECK(make_token_estimator("o200k", &error)->name() == "o200k_base");
  CHECK(make_token_estimator("cl100k", &error)->name() == "cl100k_base");
  auto estimate = make_token_estimator("estimate", &error);
  CHECK(estimate->name() == "estimate");
  CHECK_FALSE(estimate->exact());
  CHECK_FALSE(make_token_estimator("gpt2", &error));
  CHECK_FALSE(embedded_rank_data("p50k_base", &error));
}

TEST_CASE("a split that fails part-way is counted by the estimate for the rest, and counted as a fallback") {
  // A pattern that backtracks exponentially exhausts PCRE2's match limit: the
  // tokenizer must neither hang nor throw, but estimate what it could not split.
  auto table = rank_table::parse(rank_file(with_bytes({}), "(a+)+b|\\S+|\\s+"), nullptr);
  REQUIRE(table);
  std::string error;
  auto t = bpe_tokenizer::create(std::move(table), &error);
  REQUIRE(t);
  const std::string text = "xy " + std::string(40, 'a');
  const auto n = t->estimate(text, content_kind::text);
  CHECK(t->fallbacks() == 1);
  // "xy" and " " split and merged (no merges: one token per byte), the 40 a's estimated at characters/4.
  CHECK(n == 2 + 1 + 10);
}

TEST_CASE("a pathological piece is merged in bounded chunks, within one token per chunk of the exact count") {
  const std::string run(1 << 20, 'A');  // one piece of 1 MiB: 16 chunks
  tokens::merge_scratch scratch;
  const auto exact = tokens::count_piece_tokens(*tokens::rank_table::parse_static(*tokens::embedded_rank_data("o200k_base", nullptr), nullptr), run, scratch);
  const auto chunked = o200k().estimate(run, content_kind::text);
  CHECK(chunked >= exact);
  CHECK(chunked <= exact + 16);
  // Each chunk is merged alone: the count of k equal chunks is k times one.
  CHECK(o200k().estimate(std::string(4 * 64 * 1024, 'A'), content_kind::text) ==
        4 * o200k().estimate(std::string(64 * 1024, 'A'), content_kind::text));
}

TEST_CASE("counts remembered per piece give what merging every piece gives, both encodings on one thread") {
  // The reference: the same split, each piece merged afresh (no memory of earlier pieces).
  struct reference {
    std::unique_ptr<rank_table> ranks;
    std::unique_ptr<pretokenizer> split;
    std::uint64_t count(std::string_view text) const {
      merge_scratch scratch;
      pretokenizer::cursor pieces(*split, text);
      std::uint64_t n = 0;
      std::string_view piece;
      while (pieces.next(piece)) n += count_piece_tokens(*ranks, piece, scratch);
      REQUIRE_FALSE(pieces.failed());
      return n;
    }
  };
  auto make = [](std::string_view name) {
    reference r;
    r.ranks = rank_table::parse_static(*embedded_rank_data(name, nullptr), nullptr);
    REQUIRE(r.ranks);
    r.split = pretokenizer::compile(r.ranks->pattern(), nullptr);
    REQUIRE(r.split);
    return r;
  };
  const auto o200k_ref = make("o200k_base"), cl100k_ref = make("cl100k_base");
  // Words that repeat (hits), many of them (slots reused), pieces of every length up to past the
  // longest remembered one, and bytes that are not UTF-8.
  std::mt19937 rng(11);
  std::vector<std::string> words;
  for (int i = 0; i < 3000; ++i) {
    std::string w;
    const auto len = 1 + rng() % 30;
    for (std::size_t j = 0; j < len; ++j) w += char(rng() % 4 == 0 ? 'a' + rng() % 26 : 33 + rng() % 222);
    words.push_back(std::move(w));
  }
  for (int round = 0; round < 40; ++round) {
    std::string text;
    for (int i = 0; i < 400; ++i) {
      text += words[rng() % (round % 2 ? 50 : words.size())];
      text += " \n\t"[rng() % 3];
    }
    CHECK(o200k().estimate(text, content_kind::text) == o200k_ref.count(text));
    CHECK(cl100k().estimate(text, content_kind::text) == cl100k_ref.count(text));
  }
}

// The per-thread piece cache once named a tokenizer by its address: one made
// where another was freed got that one's counts for the pieces it had seen.
TEST_CASE("tokens: a tokenizer made where another was freed counts with its own ranks") {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "déjà vu, the parser's value 12345 Ünïcödé {\"role\":\"user\"} ";
  std::string error;
  std::uint64_t own = 0;  // cl100k's count, in a thread whose cache nothing else filled
  std::thread([&] { own = builtin_tokenizer("cl100k_base", &error)->estimate(text, content_kind::text); }).join();
  for (int round = 0; round < 4; ++round) {
    builtin_tokenizer("o200k_base", &error)->estimate(text, content_kind::text);
    auto cl100k = builtin_tokenizer("cl100k_base", &error);
    REQUIRE(cl100k);
    CHECK(cl100k->estimate(text, content_kind::text) == own);
  }
}
