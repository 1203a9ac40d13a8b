// The integer members of a provider's usage object, read without building a
// JSON tree: a response's usage is read on every request, and parsing it into
// nlohmann's tree cost as much as the rest of the response handling.
//
// Members are named by their path: "prompt_tokens",
// "prompt_tokens_details.cached_tokens" (two levels, which every API's usage
// fits). Only integers that fit int64 are kept, the same values
// checked::integer_at accepts on a tree; anything else is skipped. A repeated
// key reads as its last value, as on a tree; only when an object member is
// repeated can the text keep paths of the earlier one that a tree would drop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gistproxy::rewrite {

class usage_fields {
 public:
  // The value at `path` (the last one when a key repeats: JSON parsers keep the last).
  std::optional<std::int64_t> get(std::string_view path) const;
  // The value at `path`, or 0 when absent (an API's optional breakdowns).
  std::int64_t get_or_zero(std::string_view path) const { return get(path).value_or(0); }
  std::size_t size() const { return fields_.size(); }

  // Keeps at most max_fields members: a usage object has about a dozen, and
  // the other side decides how many it sends.
  static constexpr std::size_t max_fields = 64;
  void add(std::string path, std::int64_t value);
  const std::vector<std::pair<std::string, std::int64_t>>& entries() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::int64_t>> fields_;
};

// From the text of a usage object (nullopt unless it is one well-formed object).
std::optional<usage_fields> read_usage_fields(std::string_view object_text);
// From a parsed usage object (empty fields unless it is an object).
usage_fields usage_fields_of(const nlohmann::json& object);

}  // namespace gistproxy::rewrite
