// What tokens cost: a price table (USD per million tokens, per model or model
// prefix) and the arithmetic that turns a request's token usage into dollars.
// A model the table does not list is priced as its family's nearest older
// member and says so (price_match::fallback); a model of no listed family is
// unpriced: callers report it as such, never as $0.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rewrite/cost/model_family.hpp"
#include "rewrite/wire_format.hpp"

namespace gistproxy::rewrite {

// USD per million tokens.
struct model_price {
  double input = 0;        // uncached input
  double cache_read = 0;   // input served from the provider's prompt cache
  double cache_write = 0;  // input written to it (Anthropic: 1.25x input for the 5-minute cache)
  double output = 0;
};

// A lookup's answer: the price, and the entry it came from.
struct price_match {
  model_price price;
  std::string priced_as;  // the entry's "match"
  // The model is not listed: priced as the highest listed version of its
  // family and tier that is not newer (claude-opus-4-9 as claude-opus-4-8),
  // an estimate that callers name as such.
  bool fallback = false;
};

class price_table {
 public:
  struct entry {
    std::string match;  // a model name or prefix: the longest matching prefix wins
    model_price price;
    std::optional<model_version> version;  // its family, version and tier, for the fallback
  };

  // The JSON format of --prices (see docs/prices.json). nullopt with `error`
  // naming the problem when the text is not a valid table.
  static std::optional<price_table> parse(std::string_view json_text, std::string& error);
  // The table built into the binary: docs/prices.json as of the build.
  static const price_table& defaults();

  // The entry the model equals or continues (the longest), else its family's
  // fallback; nullopt for a model of no listed family, or a name longer
  // than model_name_limit.
  std::optional<price_match> lookup(std::string_view model) const;
  // lookup's price alone, for callers that only need the numbers.
  std::optional<model_price> find(std::string_view model) const;
  const std::string& date() const { return date_; }
  std::size_t size() const { return entries_.size(); }

 private:
  const entry* exact(std::string_view model) const;
  const entry* family_member(std::string_view model) const;
  void index_by_first_byte();

  std::vector<entry> entries_;
  // Entry indices grouped by the first byte of their match (table order kept
  // within a group): a model can only equal or continue a match that starts
  // with its own first byte, so an exact lookup reads one group, not the
  // whole table, on every request.
  std::vector<std::uint32_t> by_first_byte_;
  std::array<std::uint32_t, 257> group_start_{};
  std::string date_;
};

// A request's cost in USD, by kind of token.
struct cost_breakdown {
  double input = 0, cache_read = 0, cache_write = 0, output = 0;
  double total() const { return input + cache_read + cache_write + output; }
};

// From usage as token_usage holds it (input includes cache reads and writes;
// an unknown split bills every input token at the input price).
cost_breakdown cost_of(const token_usage& usage, const model_price& price);

// A model name without routing and vendor prefixes: "litellm_proxy/x" -> "x",
// "models/gemini-2.5-flash" -> "gemini-2.5-flash", "us.anthropic.claude-…" -> "claude-…".
std::string_view base_model_name(std::string_view model);
// Whether `model` is `match` or a snapshot or variant of it ("-20250514",
// "-2024-08-06", "-latest"), not another version ("-6").
bool continues(std::string_view model, std::string_view match);

// USD of `tokens` uncached input tokens.
double input_cost(std::uint64_t tokens, const model_price& price);

// The cache-read price over the price of input that is not read from the
// cache (the cache-write price where there is one): what the cost model calls
// rho. 1 for a model whose cached input is not cheaper (no cache_read price);
// nullopt for a price with no input price.
std::optional<double> cache_read_ratio(const model_price& price);

}  // namespace gistproxy::rewrite
