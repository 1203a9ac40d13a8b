// A model name read as family, version and tier, so that a price table can
// price a model it does not list as the nearest older member of its family
// (prices.cpp): "claude-opus-4-9-20260101" is family "claude-opus-", version
// 4.9, tier ""; "gpt-5.9-mini-2026-12-01" is "gpt-", 5.9, "-mini";
// "gemini-3.9-flash-lite-preview" is "gemini-", 3.9, "-flash-lite". Pure:
// the name comes from a client and is bounded here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::rewrite {

struct model_version {
  // Everything before the version: "claude-opus-", "gpt-", "o" (o3-mini).
  std::string family;
  // The version's parts ('.' or '-' between them), missing parts 0: 4.8 and
  // 4-8 are {4, 8, 0, 0}; a date is never a part ("-20250514", "-2024").
  std::array<std::uint16_t, 4> number{};
  // What follows the version up to a snapshot or release stage: "-mini",
  // "-flash-lite", "o" (gpt-4o); "" for none. Models of one family and tier
  // differ in version only; another tier is another model line.
  std::string tier;
  // A snapshot date, '@' snapshot, "-v1:0" or release stage ("-preview",
  // "-latest", "-exp") followed the tier: an entry so named prices that
  // snapshot, never its family.
  bool snapshot = false;
};

// Longer names are no model's: not read (and so never priced by family).
inline constexpr std::size_t model_name_limit = 128;

// nullopt when the name has no version (no digit after a family, or a
// date where the version would be) or is longer than model_name_limit.
std::optional<model_version> read_model_version(std::string_view name);

// Whether a's version is lower than or equal to b's.
bool version_at_most(const model_version& a, const model_version& b);

}  // namespace gistproxy::rewrite
