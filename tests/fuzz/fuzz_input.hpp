// Splitting one fuzz input into the pieces a target needs, deterministically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gistproxy::fuzz {

class input {
 public:
  input(const std::uint8_t* data, std::size_t size) : rest_(reinterpret_cast<const char*>(data), size) {}
  // One byte (0 when exhausted).
  std::uint8_t byte() {
    if (rest_.empty()) return 0;
    auto b = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }
  // A piece up to the next "\n--\n" separator (or the rest).
  std::string_view piece() {
    auto at = rest_.find("\n--\n");
    auto out = rest_.substr(0, at);
    rest_.remove_prefix(at == std::string_view::npos ? rest_.size() : at + 4);
    return out;
  }
  // Two bytes, big-endian.
  std::size_t u16() {
    const std::size_t high = byte();
    return high << 8 | byte();
  }
  // The next `n` bytes (fewer when the input ends).
  std::string_view take(std::size_t n) {
    auto out = rest_.substr(0, n);
    rest_.remove_prefix(out.size());
    return out;
  }
  bool empty() const { return rest_.empty(); }
  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
};

}  // namespace gistproxy::fuzz
