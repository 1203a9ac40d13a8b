// Numbers for people: 1234567 → "1,234,567" (reports of `report` and `replay`).
#pragma once

#include <cstdint>
#include <string>

namespace gistproxy::telemetry {

inline std::string thousands(std::uint64_t n) {
  auto digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace gistproxy::telemetry
