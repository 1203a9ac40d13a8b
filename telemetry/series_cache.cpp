#include "telemetry/series_cache.hpp"

#include <bit>
#include <cstring>
#include <utility>

namespace gistproxy::telemetry {
namespace {

// One multiply per 8 bytes (the FxHash step): label values are short, and a
// lookup per metric update must cost less than building a key would.
std::uint64_t mix(std::uint64_t h, std::uint64_t word) {
  return (std::rotl(h, 5) ^ word) * 0x517cc1b727220a95ull;
}

std::uint64_t mix_bytes(std::uint64_t h, std::string_view v) {
  std::size_t i = 0;
  for (; i + 8 <= v.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, v.data() + i, 8);
    h = mix(h, w);
  }
  if (i < v.size()) {
    std::uint64_t w = 0;
    std::memcpy(&w, v.data() + i, v.size() - i);
    h = mix(h, w);
  }
  return mix(h, v.size());  // the length ends the value: ("ab","c") is not ("a","bc")
}

}  // namespace

std::uint64_t series_cache::hash_of(std::uint64_t family, values v) {
  std::uint64_t h = mix(0, family);
  for (auto value : v) h = mix_bytes(h, value);
  return h;
}

bool series_cache::same(const std::vector<std::string>& kept, values v) {
  if (kept.size() != v.size()) return false;
  auto it = v.begin();
  for (const auto& k : kept)
    if (k != *it++) return false;
  return true;
}

void* series_cache::find(std::uint64_t family, values v, std::uint64_t hash) const {
  if (slots_.empty()) return nullptr;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = index_of(hash);; i = (i + 1) & mask) {
    const auto& s = slots_[i];
    if (!s.series) return nullptr;
    if (s.hash == hash && s.family == family && same(s.values, v)) return s.series;
  }
}

void series_cache::insert(std::uint64_t family, values v, std::uint64_t hash, void* series) {
  if ((used_ + 1) * 2 > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = index_of(hash);
  while (slots_[i].series) i = (i + 1) & mask;
  slots_[i] = {hash, family, series, std::vector<std::string>(v.begin(), v.end())};
  ++used_;
}

void series_cache::grow() {
  std::vector<slot> old = std::exchange(slots_, std::vector<slot>(slots_.empty() ? 64 : slots_.size() * 2));
  shift_ = 64 - unsigned(std::countr_zero(slots_.size()));
  const std::size_t mask = slots_.size() - 1;
  for (auto& s : old) {
    if (!s.series) continue;
    std::size_t i = index_of(s.hash);
    while (slots_[i].series) i = (i + 1) & mask;
    slots_[i] = std::move(s);
  }
}

}  // namespace gistproxy::telemetry
