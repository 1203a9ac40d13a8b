// The tokenizer `--tokenizer o200k|cl100k` makes: built on its first count,
// then counting exactly as the eagerly built one does, resumed counts included.
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "rewrite/tokens/bpe_tokenizer.hpp"
#include "rewrite/tokens/first_use_tokenizer.hpp"
#include "rewrite/tokens/resumable_count.hpp"

using namespace gistproxy::rewrite;

namespace {

const std::string sample = "{\"role\":\"tool\",\"content\":\"  don't 12345678 déjà vu\\n\\tline two\"}\n    end";

}  // namespace

TEST_CASE("first-use tokenizer: naming it builds nothing", "[tokens]") {
  std::string error;
  auto lazy = tokens::first_use_tokenizer::create("o200k_base", &error);
  REQUIRE(lazy);
  CHECK(lazy->name() == "o200k_base");
  CHECK(lazy->exact());
  CHECK(lazy->max_tokens(100) == 100);
  CHECK_FALSE(lazy->is_built());
  lazy->estimate("x", content_kind::text);
  CHECK(lazy->is_built());
  CHECK_FALSE(lazy->fell_back());
}

TEST_CASE("first-use tokenizer: an unknown encoding is refused when named", "[tokens]") {
  std::string error;
  CHECK_FALSE(tokens::first_use_tokenizer::create("p50k_base", &error));
  CHECK_FALSE(error.empty());
  error.clear();
  CHECK_FALSE(tokens::make_token_estimator("o100k", &error));
  CHECK_FALSE(error.empty());
}

TEST_CASE("first-use tokenizer: counts as the eagerly built one", "[tokens]") {
  std::string error;
  for (auto [choice, encoding] : {std::pair{"o200k", "o200k_base"}, std::pair{"cl100k", "cl100k_base"}}) {
    INFO(encoding);
    auto lazy = tokens::make_token_estimator(choice, &error);
    auto eager = tokens::builtin_tokenizer(encoding, &error);
    REQUIRE(lazy);
    REQUIRE(eager);
    CHECK(lazy->name() == eager->name());
    for (auto kind : {content_kind::text, content_kind::json})
      CHECK(lazy->estimate(sample, kind) == eager->estimate(sample, kind));
    // A resumed count goes through the built tokenizer's marks, not the
    // characters/4 fallback count_resuming uses for other estimators.
    std::vector<tokens::count_mark> lazy_marks, eager_marks;
    const auto a = tokens::count_resuming(*lazy, sample + sample, content_kind::text, lazy_marks, 0, 8);
    const auto b = tokens::count_resuming(*eager, sample + sample, content_kind::text, eager_marks, 0, 8);
    CHECK(a.tokens == b.tokens);
    REQUIRE(lazy_marks.size() == eager_marks.size());
    for (std::size_t i = 0; i < lazy_marks.size(); ++i) {
      CHECK(lazy_marks[i].at == eager_marks[i].at);
      CHECK(lazy_marks[i].units == eager_marks[i].units);
    }
  }
}

TEST_CASE("first-use tokenizer: threads counting at once all get the exact count", "[tokens]") {
  std::string error;
  auto lazy = tokens::first_use_tokenizer::create("o200k_base", &error);
  REQUIRE(lazy);
  const auto expected = tokens::builtin_tokenizer("o200k_base", &error)->estimate(sample, content_kind::text);
  std::vector<std::uint64_t> got(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] { got[i] = lazy->estimate(sample, content_kind::text); });
  for (auto& t : threads) t.join();
  for (auto n : got) CHECK(n == expected);
  const auto* first = lazy->built();
  CHECK(first == lazy->built());
}
