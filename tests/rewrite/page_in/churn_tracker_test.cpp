#include <catch2/catch.hpp>
#include <algorithm>
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

TEST_CASE("churn tracker: past its byte bound it forgets the least recently used conversation alone") {
  churn_tracker probe;
  probe.note_offered("conv-0");
  const auto one = probe.bytes();  // one conversation holding nothing but its offer
  REQUIRE(one > 0);
  churn_tracker t(8 * one);  // room for eight (a conversation may hold an eighth of the bound)
  for (int c = 0; c < 8; ++c) t.note_offered("conv-" + std::to_string(c));
  CHECK(t.conversations() == 8);
  t.begin_turn("conv-0");  // used again: now conv-1 is the least recently used
  t.note_offered("conv-8");
  CHECK(t.conversations() == 8);
  CHECK_FALSE(t.record("conv-1").offered);  // forgotten, alone
  for (int c : {0, 2, 3, 4, 5, 6, 7, 8}) CHECK(t.record("conv-" + std::to_string(c)).offered);  // the live keep their offer
  CHECK(t.bytes() <= 8 * one);
}

TEST_CASE("churn tracker: a conversation's handles and read-backs count in its bytes") {
  churn_tracker t;
  t.begin_turn("conv");
  const auto empty = t.bytes();
  std::vector<std::string> hashes;
  for (int i = 0; i < 100; ++i) hashes.push_back(sha256_hex(std::to_string(i)));
  std::vector<bool> first;
  t.offloaded("conv", views(hashes), 1, first);
  const auto offloaded = t.bytes();
  CHECK(offloaded >= empty + 100 * (64 + sizeof(std::string)));
  for (const auto& h : hashes) t.read_back("conv", h, 1, 1);
  CHECK(t.bytes() >= offloaded + 100 * (64 + sizeof(std::string)));
}

TEST_CASE("churn tracker: hostile conversations never hold more than its byte bound") {
  const std::size_t bound = 256 * 1024;
  churn_tracker t(bound);
  std::mt19937 rng(11);
  std::vector<bool> first;
  std::size_t kept_by_one = 0;
  for (int round = 0; round < 400; ++round) {
    const std::string trace = "trace-" + std::to_string(rng() % 50);
    const auto turn = t.begin_turn(trace);
    t.note_offered(trace);
    std::vector<std::string> hashes;  // many handles a turn, some of them long
    for (int k = 0; k < 300; ++k) hashes.push_back(std::string(rng() % 7 ? 64 : 900, char('a' + rng() % 26)) + std::to_string(rng()));
    t.offloaded(trace, views(hashes), turn, first);
    for (const auto& h : hashes) t.read_back(trace, h, turn, 1);
    REQUIRE(t.bytes() <= bound);
    kept_by_one = std::max(kept_by_one, std::size_t(std::count(first.begin(), first.end(), true)));
  }
  // One conversation keeps at most its share (an eighth of the bound), however many it offloads.
  churn_tracker lone(bound);
  std::vector<std::string> many;
  for (int i = 0; i < 20000; ++i) many.push_back(sha256_hex(std::to_string(i)));
  lone.begin_turn("one");
  lone.offloaded("one", views(many), 1, first);
  for (const auto& h : many) lone.read_back("one", h, 1, 1);
  CHECK(lone.bytes() <= bound / 8);
  CHECK(lone.conversations() == 1);
  CHECK(std::count(first.begin(), first.end(), true) > 100);  // it did keep what fits
  CHECK(kept_by_one > 0);
}

TEST_CASE("churn tracker: a churning conversation's records share one sorted list of its offloads") {
  churn_tracker t;
  std::vector<std::string> hashes;
  for (int i = 0; i < 50; ++i) hashes.push_back(sha256_hex(std::to_string(i)));
  std::vector<bool> first;
  t.offloaded("conv", views(hashes), t.begin_turn("conv"), first);
  CHECK_FALSE(t.record("conv").offloaded_handles);  // not churning: nothing to hand out
  // Read back on two turns: a re-reader.
  t.read_back("conv", hashes[0], 1, 1);
  t.read_back("conv", hashes[0], t.begin_turn("conv"), 1);
  const auto before = t.bytes();
  const auto a = t.record("conv");
  REQUIRE(a.churning);
  REQUIRE(a.offloaded_handles);
  CHECK(std::is_sorted(a.offloaded_handles->begin(), a.offloaded_handles->end()));
  CHECK(a.offloaded_handles->size() == 50);
  CHECK(t.bytes() >= before + 50 * 64);  // the list counts against the bound while it lives
  const auto b = t.record("conv");
  CHECK(b.offloaded_handles == a.offloaded_handles);  // the same list, not a copy
  // A handle added afterwards makes a new list that holds it.
  const auto late = sha256_hex("late");
  t.offloaded("conv", views({late}), t.begin_turn("conv"), first);
  const auto c = t.record("conv");
  REQUIRE(c.offloaded_handles);
  CHECK(c.offloaded_handles != a.offloaded_handles);
  CHECK(std::binary_search(c.offloaded_handles->begin(), c.offloaded_handles->end(), late));
  CHECK_FALSE(c.keeps_inline(late));
  CHECK(c.keeps_inline(sha256_hex("never offloaded")));
}

TEST_CASE("churn tracker: what a turn was shown before is what its re-reads are weighed against") {
  churn_tracker t;
  const std::string a = sha256_hex("a"), b = sha256_hex("b"), c = sha256_hex("c"), aged = sha256_hex("aged");
  std::vector<bool> first;
  t.offloaded("conv", views({a, b, c}), t.begin_turn("conv"), first);
  const auto turn = t.begin_turn("conv");
  // a and b repeated from the previous turn (not handed in), c again, and
  // `aged` new to the trace but offloaded for its age: four shown before.
  const std::vector<std::uint8_t> went_aged{0, 1};
  t.offloaded("conv", views({c, aged}), turn, first, 2, went_aged);
  CHECK_FALSE(t.read_back("conv", a, turn, 1));  // one of four
  CHECK(t.read_back("conv", aged, turn, 1));     // two of four: the model saw `aged` inline before
  const auto r = t.record("conv");
  CHECK(r.churning);
  CHECK(r.keeps_inline(a));
  CHECK(r.keeps_inline(aged));
  CHECK_FALSE(r.keeps_inline(b));
}

TEST_CASE("churn tracker: an output offloaded on its own turn and read then is no re-read") {
  churn_tracker t;
  const std::string a = sha256_hex("a"), b = sha256_hex("b");
  std::vector<bool> first;
  t.offloaded("conv", views({a}), t.begin_turn("conv"), first);
  CHECK_FALSE(t.read_back("conv", a, 1, 1));
  const auto turn = t.begin_turn("conv");
  t.offloaded("conv", views({b}), turn, first, 1);
  CHECK_FALSE(t.read_back("conv", b, turn, 1));
  CHECK_FALSE(t.record("conv").churning);
}

TEST_CASE("churn tracker: a retry is its turn again and its read-back counts once") {
  churn_tracker t;
  const std::string old = sha256_hex("old"), h = sha256_hex("retried");
  std::vector<bool> first;
  t.offloaded("conv", views({old}), t.begin_turn("conv"), first);
  const auto turn = t.begin_turn("conv");
  CHECK(turn == 2);
  t.offloaded("conv", views({old, h}), turn, first);
  CHECK_FALSE(t.read_back("conv", h, turn, 1));  // the new output, read on its own turn
  CHECK(t.begin_turn("conv", true) == 2);  // the client sent turn 2 again
  t.offloaded("conv", views({old, h}), 2, first);
  CHECK_FALSE(t.read_back("conv", h, 2, 1));  // the same turn: not a re-read
  CHECK_FALSE(t.record("conv").churning);
  CHECK(t.begin_turn("conv") == 3);
  CHECK(churn_tracker().begin_turn("new", true) == 1);  // nothing to retry: a first turn
}
