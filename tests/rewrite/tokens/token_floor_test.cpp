// bpe_token_floor never exceeds either encoding's exact count, on texts made
// to put spaces next to everything a pre-tokenizing pattern treats apart.
#include <catch2/catch.hpp>

#include <string>

#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "rewrite/tokens/token_floor.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("token floor: never above the exact count", "[tokens]") {
  static const char* parts[] = {" ", "  ", " a", "a", "A", " 1", "123456", " !", "!!", "'s", " 's", "\n", " \n", "\t",
                                " \t", "é", " é", "日本", " 日本", "\xc2\xa0", " \xc2\xa0", "\xe3\x80\x80", "{\"", "\":",
                                " {", "//", " /", "\r\n", "x_y", " ."};
  std::string error;
  auto o200k = tokens::builtin_tokenizer("o200k_base", &error);
  auto cl100k = tokens::builtin_tokenizer("cl100k_base", &error);
  REQUIRE(o200k);
  REQUIRE(cl100k);
  std::uint64_t s = 5;
  std::size_t positive = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const auto n = 1 + round % 40;
    for (int i = 0; i < n; ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      text += parts[(s >> 33) % (sizeof parts / sizeof *parts)];
    }
    INFO("text [" << text << "]");
    const auto floor = tokens::bpe_token_floor(text);
    positive += floor > 0;
    CHECK(floor <= o200k->estimate(text, content_kind::text));
    CHECK(floor <= cl100k->estimate(text, content_kind::text));
  }
  CHECK(positive > 1000);  // the floor was above zero for most texts: the check was not vacuous
}

TEST_CASE("token floor: counts words, not bytes", "[tokens]") {
  CHECK(tokens::bpe_token_floor("") == 0);
  CHECK(tokens::bpe_token_floor("one") == 0);
  CHECK(tokens::bpe_token_floor("one two three") == 2);
  CHECK(tokens::bpe_token_floor("a  b") == 1);   // the space before a space starts nothing for sure
  CHECK(tokens::bpe_token_floor("a \xc3\xa9") == 0);  // nor one before non-ASCII (which may be whitespace)
  CHECK(tokens::bpe_token_floor("x ") == 0);
}
