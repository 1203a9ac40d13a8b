// One definition of "saved", for every meter (wrap's line, the live view,
// /api/summary, /metrics, gistproxy report, replay): a request's ledger puts
// what the client's request as sent would have cost beside what every
// upstream request gistproxy made for it did cost.
//
//   without: the client's request, once, priced with the provider's cache
//            rules: the first hop's bill, with each offloaded output put back
//            (a cache read when the previous turn carried it too, a cache
//            write when new) and read_blob's definition taken out; the answer
//            the client got (the last hop's output).
//   with:    every hop, page-in hops included, from the provider's usage.
//
// A hop without usage makes the entry an estimate of nothing: it is counted
// as unmeasured, never as $0 or as a saving. Pure arithmetic.
#pragma once

#include <cstdint>
#include <span>

#include "rewrite/cost/prices.hpp"
#include "rewrite/wire_format.hpp"

namespace gistproxy::rewrite {

// One hop's usage from the sums over hops before and after it. A hop whose
// input did not grow the sum reported none (every real request has input).
token_usage usage_between(const token_usage& before, const token_usage& after);

// What gistproxy changed in the client's request, in tokens (its tokenizer's).
struct request_changes {
  std::uint64_t offloaded_new = 0;       // tokens_before - tokens_after of outputs first offloaded this turn
  std::uint64_t offloaded_repeated = 0;  // the same of outputs the previous turn offloaded too
  std::uint64_t tool_definition = 0;     // read_blob's definition, when gistproxy added it
  bool tool_definition_new = false;      // added on this turn for the first time
};

struct ledger_entry {
  bool measured = false;  // every hop reported its usage
  bool priced = false;    // ... and the model has a price
  std::int64_t input_without = 0, input_with = 0;
  std::int64_t output_without = 0, output_with = 0;
  double usd_without = 0, usd_with = 0;
  std::int64_t input_saved() const { return input_without - input_with; }
  double usd_saved() const { return usd_without - usd_with; }
};

// `hops`: the provider's usage of each upstream request, in order (the
// client's own first). `price`: null when the model has none.
ledger_entry account(std::span<const token_usage> hops, const request_changes& changes, const model_price* price);

// Sums of entries (a conversation's, a tenant's, all): measured entries only;
// what was not measured or priced is counted beside.
struct ledger_total {
  std::uint64_t requests = 0, unmeasured = 0, unpriced = 0;
  std::int64_t input_without = 0, input_with = 0, output_without = 0, output_with = 0;
  double usd_without = 0, usd_with = 0;
  void add(const ledger_entry& e);
  void add(const ledger_total& t);  // another sum (a folded tenant, rows not shown)
  double saved_share() const {
    return input_without > 0 ? 1.0 - double(input_with) / double(input_without) : 0.0;
  }
};

}  // namespace gistproxy::rewrite
