#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "rewrite/blob/digest.hpp"
#include "rewrite/page_in/churn_tracker.hpp"

using namespace gistproxy::rewrite;

namespace {

std::vector<std::string_view> views(const std::vector<std::string>& s) { return {s.begin(), s.end()}; }

}  // namespace

TEST_CASE("churn tracker: a handle is new once per trace, and remembers the turn it first went") {
  churn_tracker churn;
  const std::string a = sha256_hex("a"), b = sha256_hex("b"), c = sha256_hex("c");
  std::vector<bool> first;
  CHECK(churn.begin_turn("t1") == 1);
  churn.offloaded("t1", views({a, b}), 1, first);
  CHECK(first == std::vector<bool>{true, true});
  CHECK(churn.begin_turn("t1") == 2);
  churn.offloaded("t1", views({a, b, c}), 2, first);
  CHECK(first == std::vector<bool>{false, false, true});
  // Another conversation has its own handles.
  churn.begin_turn("t2");
  churn.offloaded("t2", views({a}), 1, first);
  CHECK(first == std::vector<bool>{true});
  CHECK(churn.turns_since_offload("t1", a, 5) == 4u);
  CHECK(churn.turns_since_offload("t1", c, 5) == 3u);
  CHECK_FALSE(churn.turns_since_offload("t2", b, 5));
  CHECK_FALSE(churn.turns_since_offload("t3", a, 5));
  churn.offloaded("t1", {}, 3, first);
  CHECK(first.empty());
}

TEST_CASE("churn tracker: a repeated handle within one turn counts as new once") {
  churn_tracker churn;
  const std::string a = sha256_hex("a");
  std::vector<bool> first;
  churn.begin_turn("t");
  churn.offloaded("t", views({a, a}), 1, first);
  CHECK(first == std::vector<bool>{true, false});
}

TEST_CASE("churn tracker: random turns agree with a set per trace") {
  churn_tracker churn;
  std::mt19937 rng(7);
  std::vector<std::string> pool;
  for (int i = 0; i < 300; ++i) pool.push_back(sha256_hex(std::to_string(i)));
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<bool> first;
  for (int turn = 1; turn <= 200; ++turn) {
    const std::string trace = "trace-" + std::to_string(rng() % 3);
    std::vector<std::string> hashes;
    for (int k = int(rng() % 40); k > 0; --k) hashes.push_back(pool[rng() % pool.size()]);
    churn.offloaded(trace, views(hashes), std::uint64_t(turn), first);
    REQUIRE(first.size() == hashes.size());
    for (std::size_t i = 0; i < hashes.size(); ++i) CHECK(first[i] == seen.insert({trace, hashes[i]}).second);
  }
}

TEST_CASE("handle key hash: equal keys hash equal, and keys differing in the digest spread") {
  handle_key_hash h;
  const std::string a = sha256_hex("a");
  CHECK(h(a) == h(std::string_view(a)));
  CHECK(h("tenant/" + a) == h(std::string("tenant/") + a));
  CHECK(h("short") == h(std::string("short")));
  std::set<std::size_t> buckets;
  for (int i = 0; i < 1000; ++i) buckets.insert(h("t/" + sha256_hex(std::to_string(i))) % 97);
  CHECK(buckets.size() == 97);  // a thousand digests reach every one of 97 buckets
}
