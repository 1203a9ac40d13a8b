// forwarded_in_common: how many bytes two forwarded bodies surely share, from
// the bytes their client bodies share and the edits each turn spliced in.
// Checked against the spliced bodies themselves on random edits.
#include <catch2/catch.hpp>

#include <random>

#include "rewrite/json/walk_reuse.hpp"
#include "rewrite/turn_memory/turn_reuse.hpp"

using namespace gistproxy::rewrite;

namespace {

splice_edit owned(std::size_t begin, std::size_t end, std::string text) {
  splice_edit e;
  e.at = {begin, end};
  e.owned = std::move(text);
  return e;
}

std::string spliced(const std::string& body, const std::vector<splice_edit>& edits) {
  std::string out;
  std::size_t pos = 0;
  for (const auto& e : edits) {
    out.append(body, pos, e.at.begin - pos);
    e.append_to(out);
    pos = e.at.end;
  }
  return out.append(body, pos);
}

}  // namespace

TEST_CASE("forwarded bytes in common: alike edits within the shared bytes carry them over", "[turn_memory]") {
  const std::vector<splice_edit> before{owned(10, 20, "ref-a"), owned(30, 40, "ref-b")};
  // The same edits, the client bodies sharing 50 bytes: 50 less 10 less 10 plus 5 plus 5.
  CHECK(forwarded_in_common(before, before, 50) == 40);
  // No edit in either: the client's shared bytes, as they are.
  CHECK(forwarded_in_common({}, {}, 50) == 50);
  // An edit unlike the other's (another reference) ends what is known at its start.
  CHECK(forwarded_in_common(before, {owned(10, 20, "ref-a"), owned(30, 40, "ref-c")}, 50) == 25);
  // One turn's edit the other did not make, at 30: known up to it.
  CHECK(forwarded_in_common(before, {owned(10, 20, "ref-a")}, 50) == 25);
  CHECK(forwarded_in_common({owned(10, 20, "ref-a")}, before, 50) == 25);
  // An edit that reaches past the shared bytes is not known alike.
  CHECK(forwarded_in_common(before, before, 35) == 25);
  // Edits past the shared bytes do not matter.
  CHECK(forwarded_in_common(before, {owned(10, 20, "ref-a"), owned(30, 40, "ref-b"), owned(60, 70, "x")}, 50) == 40);
  // An insertion (an empty range) counts as an edit like any other.
  CHECK(forwarded_in_common({owned(5, 5, "ins")}, {owned(5, 5, "ins")}, 20) == 23);
  CHECK(forwarded_in_common({owned(5, 5, "ins")}, {owned(5, 5, "other")}, 20) == 5);
}

TEST_CASE("forwarded bytes in common never exceed what the spliced bodies share", "[turn_memory]") {
  std::mt19937 rng(3);
  const char* refs[] = {"r1", "ref-2", "reference-three"};
  for (int round = 0; round < 3000; ++round) {
    std::string a(40 + rng() % 60, 'x');
    for (auto& c : a) c = char('a' + rng() % 3);
    std::string b = a.substr(0, rng() % (a.size() + 1));
    while (b.size() < a.size() + 10) b += char('a' + rng() % 3);
    const std::size_t same = json::common_prefix(a, b);
    auto edits_of = [&](const std::string& body, std::mt19937& r) {
      std::vector<splice_edit> out;
      for (std::size_t pos = r() % 8; pos + 1 < body.size(); pos += 2 + r() % 12) {
        const std::size_t end = std::min(body.size(), pos + r() % 6);
        out.push_back(owned(pos, end, refs[r() % 3]));
        pos = end;
      }
      return out;
    };
    std::mt19937 shared_rng(rng());
    auto r1 = shared_rng, r2 = shared_rng;  // mostly the same edits, as two turns of a conversation make
    auto ea = edits_of(a, r1);
    auto eb = edits_of(b, r2);
    if (rng() % 3 == 0 && !eb.empty()) eb[rng() % eb.size()].owned = "changed";
    const auto fa = spliced(a, ea), fb = spliced(b, eb);
    INFO("round " << round);
    CHECK(forwarded_in_common(ea, eb, same) <= json::common_prefix(fa, fb));
  }
}
