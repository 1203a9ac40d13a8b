// The control group: a stable share of conversations forwarded untouched (no
// offload, no read_blob), so that cost, latency, errors and output tokens can
// be compared with the treated ones on live traffic instead of trusting an
// estimate. Membership is a pure function of the conversation's trace id, so
// every turn of a conversation lands in the same group, on every replica.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gistproxy::rewrite {

enum class experiment_group { treated, control };

std::string_view group_label(experiment_group g);

// Shares are held in basis points (1/100 of a percent): 0..10000.
inline constexpr std::uint32_t all_basis_points = 10000;

// "12.5" -> 1250; nullopt unless a number in [0, 100] with at most two decimals.
std::optional<std::uint32_t> parse_control_percent(std::string_view text);

// The group of the conversation whose 16-byte trace id is given. Uses the id's
// last 8 bytes: uniform for the ids gistproxy derives (SHA-256) and the random
// part of a W3C trace id a client sends.
experiment_group group_of(std::span<const std::uint8_t> trace_id, std::uint32_t control_basis_points);

}  // namespace gistproxy::rewrite
