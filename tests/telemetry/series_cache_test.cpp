#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "telemetry/series_cache.hpp"

using gistproxy::telemetry::series_cache;

TEST_CASE("series cache: finds what it keeps by family and values and nothing else") {
  series_cache c;
  int a = 0, b = 0, d = 0;
  const auto h1 = series_cache::hash_of(1, {"chat", "gpt-4o"});
  c.insert(1, {"chat", "gpt-4o"}, h1, &a);
  c.insert(2, {"chat", "gpt-4o"}, series_cache::hash_of(2, {"chat", "gpt-4o"}), &b);
  c.insert(1, {"ab", "c"}, series_cache::hash_of(1, {"ab", "c"}), &d);
  CHECK(c.find(1, {"chat", "gpt-4o"}, h1) == &a);
  CHECK(c.find(2, {"chat", "gpt-4o"}, series_cache::hash_of(2, {"chat", "gpt-4o"})) == &b);
  CHECK(c.find(1, {"ab", "c"}, series_cache::hash_of(1, {"ab", "c"})) == &d);
  CHECK(c.find(1, {"a", "bc"}, series_cache::hash_of(1, {"a", "bc"})) == nullptr);
  CHECK(c.find(1, {"chat"}, series_cache::hash_of(1, {"chat"})) == nullptr);
  CHECK(c.find(1, {}, series_cache::hash_of(1, {})) == nullptr);
  CHECK(series_cache::hash_of(1, {"ab", "c"}) != series_cache::hash_of(1, {"a", "bc"}));
  CHECK(series_cache::hash_of(1, {"x"}) != series_cache::hash_of(2, {"x"}));
}

TEST_CASE("series cache: values that share a hash stay apart") {
  // The lookup compares values, so a collision (forced here) is a miss, never
  // another series' counter.
  series_cache c;
  int a = 0, b = 0;
  c.insert(7, {"one"}, 42, &a);
  CHECK(c.find(7, {"two"}, 42) == nullptr);
  c.insert(7, {"two"}, 42, &b);
  CHECK(c.find(7, {"one"}, 42) == &a);
  CHECK(c.find(7, {"two"}, 42) == &b);
  CHECK(c.find(8, {"one"}, 42) == nullptr);
}

TEST_CASE("series cache: keeps every entry as it grows") {
  series_cache c;
  std::vector<int> series(3000);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < series.size(); ++i) names.push_back("model-" + std::to_string(i) + "-with-a-long-name");
  for (std::size_t i = 0; i < series.size(); ++i)
    c.insert(3, {"chat", names[i]}, series_cache::hash_of(3, {"chat", names[i]}), &series[i]);
  CHECK(c.size() == series.size());
  std::size_t found = 0;
  for (std::size_t i = 0; i < series.size(); ++i)
    found += c.find(3, {"chat", names[i]}, series_cache::hash_of(3, {"chat", names[i]})) == &series[i];
  CHECK(found == series.size());
}
