#include "rewrite/conversation/conversation_chains.hpp"

#include <catch2/catch.hpp>
#include <vector>

using namespace gistproxy::rewrite;

namespace {

conversation_id opening(std::uint8_t n) {
  conversation_id id{};
  id[0] = n;
  return id;
}

// A turn of items named by numbers: its cumulative hashes, as the prefix
// fingerprint makes them (any order-sensitive fold will do here).
std::vector<std::uint64_t> items(std::initializer_list<std::uint64_t> names) {
  std::vector<std::uint64_t> out;
  std::uint64_t h = 1469598103934665603ull;
  for (auto n : names) {
    h = (h ^ n) * 1099511628211ull;
    out.push_back(h);
  }
  return out;
}

conversation_turn resolve(conversation_chains& c, const conversation_id& o, const std::vector<std::uint64_t>& turn,
                          std::uint64_t head = 7) {
  return c.resolve(o, {head, turn});
}

}  // namespace

TEST_CASE("a conversation that extends its turns keeps the opening's id", "[conversation_chains]") {
  conversation_chains c;
  auto a = resolve(c, opening(1), items({1}));
  auto b = resolve(c, opening(1), items({1, 2, 3}));
  auto d = resolve(c, opening(1), items({1, 2, 3, 4, 5}));
  CHECK(a.id == opening(1));
  CHECK(b.id == opening(1));
  CHECK(d.id == opening(1));
  CHECK_FALSE(a.retry);
  CHECK_FALSE(b.retry);
  CHECK_FALSE(b.branched);
}

TEST_CASE("the same turn sent again is a retry of the same conversation", "[conversation_chains]") {
  conversation_chains c;
  resolve(c, opening(1), items({1}));
  resolve(c, opening(1), items({1, 2, 3}));
  auto again = resolve(c, opening(1), items({1, 2, 3}));
  CHECK(again.id == opening(1));
  CHECK(again.retry);
  auto next = resolve(c, opening(1), items({1, 2, 3, 4, 5}));
  CHECK_FALSE(next.retry);
  CHECK(next.id == opening(1));
}

TEST_CASE("two runs with the same opening whose answers differ are two conversations", "[conversation_chains]") {
  conversation_chains c;
  auto a1 = resolve(c, opening(1), items({1}));
  auto a2 = resolve(c, opening(1), items({1, 20, 21}));
  auto b1 = resolve(c, opening(1), items({1}));  // run B starts while A is on its second turn
  auto b2 = resolve(c, opening(1), items({1, 30, 31}));
  auto a3 = resolve(c, opening(1), items({1, 20, 21, 22, 23}));
  auto b3 = resolve(c, opening(1), items({1, 30, 31, 32, 33}));
  CHECK(a1.id == a2.id);
  CHECK(a2.id == a3.id);
  CHECK(b1.id == b2.id);
  CHECK(b2.id == b3.id);
  CHECK(a1.id != b1.id);
  CHECK(b1.branched);
  CHECK_FALSE(b2.branched);
}

TEST_CASE("runs in lockstep with identical turns are retries of one conversation", "[conversation_chains]") {
  conversation_chains c;
  auto a1 = resolve(c, opening(1), items({1}));
  auto b1 = resolve(c, opening(1), items({1}));
  CHECK(a1.id == b1.id);
  CHECK(b1.retry);
}

TEST_CASE("openings and credentials apart are conversations apart", "[conversation_chains]") {
  conversation_chains c;
  auto a = resolve(c, opening(1), items({1, 2}));
  auto b = resolve(c, opening(2), items({1, 2}));
  CHECK(a.id == opening(1));
  CHECK(b.id == opening(2));
  CHECK_FALSE(b.retry);
}

TEST_CASE("a turn that edits its history after the run's first answer goes on in its conversation", "[conversation_chains]") {
  conversation_chains c;
  resolve(c, opening(1), items({1}));
  resolve(c, opening(1), items({1, 2, 3, 4, 5}));
  // An earlier output cleared (item 3), the first answer (2) kept.
  auto edited = resolve(c, opening(1), items({1, 2, 30, 4, 5, 6, 7}));
  CHECK(edited.id == opening(1));
  CHECK_FALSE(edited.branched);
  CHECK_FALSE(edited.retry);
  auto next = resolve(c, opening(1), items({1, 2, 30, 4, 5, 6, 7, 8, 9}));
  CHECK(next.id == opening(1));
  // The same length but another first answer: another run.
  auto other = resolve(c, opening(1), items({1, 20, 30, 4, 5, 6, 7, 8, 9}));
  CHECK(other.id != opening(1));
  CHECK(other.branched);
}

TEST_CASE("a turn shorter than its conversation's latest that does not extend it is another run", "[conversation_chains]") {
  conversation_chains c;
  resolve(c, opening(1), items({1}));
  resolve(c, opening(1), items({1, 2, 3, 4, 5}));
  auto behind = resolve(c, opening(1), items({1, 2, 3}));
  CHECK(behind.id != opening(1));
}

TEST_CASE("a different head starts another conversation", "[conversation_chains]") {
  conversation_chains c;
  resolve(c, opening(1), items({1, 2}), 7);
  auto other = resolve(c, opening(1), items({1, 2, 3}), 8);
  CHECK(other.id != opening(1));
}

TEST_CASE("a turn with no items is the opening's conversation and never a retry", "[conversation_chains]") {
  conversation_chains c;
  std::vector<std::uint64_t> none;
  auto a = c.resolve(opening(3), {7, none});
  auto b = c.resolve(opening(3), {7, none});
  CHECK(a.id == opening(3));
  CHECK(b.id == opening(3));
  CHECK_FALSE(b.retry);
  CHECK(c.openings() == 0);
}

TEST_CASE("conversation chains stay within their bounds", "[conversation_chains]") {
  conversation_chains c(4, 2);
  for (std::uint8_t o = 0; o < 10; ++o) resolve(c, opening(o), items({1}));
  CHECK(c.openings() == 4);
  // Three runs under one opening with room for two: the one heard from least
  // recently is forgotten and its next turn starts afresh.
  auto a = resolve(c, opening(50), items({1, 2}));
  auto b = resolve(c, opening(50), items({1, 3}));
  auto d = resolve(c, opening(50), items({1, 4}));
  CHECK(a.id != b.id);
  CHECK(b.id != d.id);
  auto a_again = resolve(c, opening(50), items({1, 2, 5}));
  CHECK(a_again.id != a.id);
  auto d_next = resolve(c, opening(50), items({1, 4, 6}));
  CHECK(d_next.id == d.id);
}

TEST_CASE("conversation ids read back from hex only as serve writes them", "[conversation_chains]") {
  const auto id = opening_of("chat\nfirst", "Bearer k");
  CHECK(id == opening_of_joined(std::string("chat\nfirst") + '\0' + "Bearer k"));
  CHECK(conversation_from_hex(conversation_hex(id)) == id);
  CHECK_FALSE(conversation_from_hex(conversation_hex(id).substr(1)));
  CHECK_FALSE(conversation_from_hex(conversation_hex(id) + "0"));
  auto upper = conversation_hex(id);
  upper[0] = 'G';
  CHECK_FALSE(conversation_from_hex(upper));
  CHECK_FALSE(conversation_from_hex(""));
}
