// A thread's memo of the metric series it has looked up: a family's label
// values to its series, found by a hash over the values themselves, so a
// hit builds no key string and takes no lock. Entries are never removed
// (a family never removes a series, and its id is never reused).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::telemetry {

class series_cache {
 public:
  using values = std::initializer_list<std::string_view>;
  // Differs for value lists that differ (up to hash collisions, which the
  // lookup tells apart by comparing the values).
  static std::uint64_t hash_of(std::uint64_t family, values v);
  // The series remembered for these values of this family, else nullptr.
  void* find(std::uint64_t family, values v, std::uint64_t hash) const;
  void insert(std::uint64_t family, values v, std::uint64_t hash, void* series);
  std::size_t size() const { return used_; }

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::uint64_t family = 0;
    void* series = nullptr;  // nullptr: an empty slot
    std::vector<std::string> values;
  };
  static bool same(const std::vector<std::string>& kept, values v);
  std::size_t index_of(std::uint64_t hash) const { return std::size_t(hash >> shift_); }
  void grow();

  std::vector<slot> slots_;  // open addressing, linear probing, at most half full
  unsigned shift_ = 64;      // 64 - log2(slots_.size()): the hash's top bits index
  std::size_t used_ = 0;
};

}  // namespace gistproxy::telemetry
