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

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace gistproxy::rewrite {

namespace json {
class cursor;
}  // namespace json

class usage_fields {
 public:
  // Token counts above this are not believed (see add()).
  static constexpr std::int64_t max_token_count = 1'000'000'000'000;
  // The value at `path` (the last one when a key repeats: JSON parsers keep the last).
  std::optional<std::int64_t> get(std::string_view path) const;
  // The value at `path`, or 0 when absent (an API's optional breakdowns).
  std::int64_t get_or_zero(std::string_view path) const { return get(path).value_or(0); }
  std::size_t size() const { return count_; }
  std::string_view path(std::size_t i) const { return {names_.data() + fields_[i].begin, fields_[i].size}; }
  std::int64_t value(std::size_t i) const { return fields_[i].value; }

  // Keeps at most max_fields members with names of at most max_name_bytes in
  // all: a usage object has about a dozen, and the other side decides how
  // many it sends. Fixed storage: reading usage allocates nothing.
  static constexpr std::size_t max_fields = 48;
  static constexpr std::size_t max_name_bytes = 1536;
  // Adds "parent.name" (or "name" under no parent); false (nothing added) when full.
  bool add(std::string_view parent, std::string_view name, std::int64_t value);

 private:
  // Left uninitialised: only the first count_ are ever read, and zeroing
  // every slot cost more than reading the usage object.
  struct field {
    std::uint16_t begin;
    std::uint16_t size;
    std::int64_t value;
  };
  std::array<field, max_fields> fields_;
  std::array<char, max_name_bytes> names_;
  std::size_t count_ = 0;
  std::size_t name_bytes_ = 0;
};

// a + b + c, held at INT64_MAX: counts from the upstream are not trusted to stay small.
std::int64_t saturating_sum(std::int64_t a, std::int64_t b, std::int64_t c = 0);

// From the text of a usage object (nullopt unless it is one well-formed object).
std::optional<usage_fields> read_usage_fields(std::string_view object_text);
// From the value the cursor is at, consumed in the walk that found it (a
// response is walked once): `out` is nullopt unless the value is an object.
// False when the value is not well-formed (the cursor has failed).
bool read_usage_value(json::cursor& at, std::optional<usage_fields>& out);
// From a parsed usage object (empty fields unless it is an object).
usage_fields usage_fields_of(const nlohmann::json& object);

}  // namespace gistproxy::rewrite
