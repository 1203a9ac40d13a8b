// The ledger every meter reads: without = the client's request as sent, once,
// cache priced; with = every hop gistproxy made, from the provider's usage.
#include <catch2/catch.hpp>

#include <vector>

#include "rewrite/cost/ledger.hpp"

using namespace gistproxy::rewrite;

namespace {

// Anthropic-shaped prices: write 1.25x, read 0.1x input; $3 / $15 per million.
const model_price price{3.0, 0.3, 3.75, 15.0};

token_usage usage(std::int64_t input, std::int64_t output, std::int64_t read, std::int64_t write) {
  return token_usage{input, output, read, write};
}

}  // namespace

TEST_CASE("ledger: a turn whose output is never read saves its offloaded tokens and pays nothing else") {
  // The client sent 10,000 tokens; 6,000 of a new output went as a 300-token reference.
  std::vector<token_usage> hops{usage(4300, 50, 2000, 2300)};
  const auto e = account(hops, {.offloaded_new = 5700}, &price);
  REQUIRE(e.measured);
  REQUIRE(e.priced);
  CHECK(e.input_without == 10000);
  CHECK(e.input_with == 4300);
  CHECK(e.output_without == 50);
  CHECK(e.usd_with == Approx((2000 * 0.3 + 2300 * 3.75 + 50 * 15.0) * 1e-6));
  CHECK(e.usd_without == Approx((2000 * 0.3 + 2300 * 3.75 + 5700 * 3.75 + 50 * 15.0) * 1e-6));
  CHECK(e.usd_saved() > 0);
}

TEST_CASE("ledger: a page-in hop is gistproxy's cost and never part of without") {
  // Hop 2 re-sends the conversation (cached) with the page appended.
  std::vector<token_usage> hops{usage(4300, 20, 2000, 2300), usage(10400, 60, 4300, 0)};
  const auto e = account(hops, {.offloaded_new = 5700}, &price);
  CHECK(e.input_without == 10000);
  CHECK(e.input_with == 14700);
  CHECK(e.output_without == 60);  // the answer the client got
  CHECK(e.output_with == 80);
  CHECK(e.input_saved() < 0);
  const double with = (2000 * 0.3 + 2300 * 3.75 + 20 * 15.0 + 4300 * 0.3 + 6100 * 3.0 + 60 * 15.0) * 1e-6;
  CHECK(e.usd_with == Approx(with));
}

TEST_CASE("ledger: an output the previous turn offloaded too is priced back as a cache read") {
  std::vector<token_usage> hops{usage(4300, 50, 4000, 300)};
  const auto e = account(hops, {.offloaded_repeated = 5700}, &price);
  CHECK(e.usd_without - e.usd_with == Approx(5700 * 0.3 * 1e-6));
}

TEST_CASE("ledger: a cache miss is priced as the provider billed it") {
  std::vector<token_usage> hops{usage(4300, 50, 0, 0)};
  const auto e = account(hops, {.offloaded_repeated = 5700}, &price);
  CHECK(e.usd_with == Approx((4300 * 3.0 + 50 * 15.0) * 1e-6));
  CHECK(e.usd_without == Approx((4300 * 3.0 + 5700 * 0.3 + 50 * 15.0) * 1e-6));
}

TEST_CASE("ledger: read_blob's definition is gistproxy's and comes out of without") {
  std::vector<token_usage> hops{usage(4600, 50, 0, 4600)};
  const auto e = account(hops, {.offloaded_new = 5700, .tool_definition = 300, .tool_definition_new = true}, &price);
  CHECK(e.input_without == 10000);
  CHECK(e.usd_without == Approx((4600 * 3.75 + 5700 * 3.75 - 300 * 3.75 + 50 * 15.0) * 1e-6));
}

TEST_CASE("ledger: an answer without usage is unmeasured and counted beside the totals") {
  std::vector<token_usage> hops{usage(4300, 20, 2000, 2300), token_usage{}};
  const auto e = account(hops, {.offloaded_new = 5700}, &price);
  CHECK_FALSE(e.measured);
  ledger_total t;
  t.add(e);
  t.add(account(std::vector<token_usage>{usage(100, 1, 0, 0)}, {}, nullptr));
  CHECK(t.requests == 2);
  CHECK(t.unmeasured == 1);
  CHECK(t.unpriced == 1);
  CHECK(t.input_with == 100);
  CHECK(t.usd_with == 0);
}
