#include "telemetry/ids.hpp"

#include <random>

namespace gistproxy::telemetry {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // uppercase is not allowed by W3C trace-context
}

// splitmix64: tiny, fast, good enough for unique ids (not a secret).
std::uint64_t next_random() {
  thread_local std::uint64_t state = [] {
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ rd();
  }();
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <std::size_t N>
void fill(std::array<std::uint8_t, N>& out, std::uint64_t (*source)()) {
  for (std::size_t i = 0; i < N; i += 8) {
    std::uint64_t r = source();
    for (std::size_t j = 0; j < 8 && i + j < N; ++j) out[i + j] = std::uint8_t(r >> (8 * j));
  }
}

}  // namespace

template <std::size_t N>
std::string byte_id<N>::hex() const {
  std::array<char, 2 * N> digits;  // written whole, then one copy: no fill, no checked indexing
  for (std::size_t i = 0; i < N; ++i) {
    digits[2 * i] = hex_digits[bytes[i] >> 4];
    digits[2 * i + 1] = hex_digits[bytes[i] & 15];
  }
  return std::string(digits.data(), digits.size());
}

template <std::size_t N>
std::optional<byte_id<N>> byte_id<N>::from_hex(std::string_view s) {
  if (s.size() != 2 * N) return std::nullopt;
  byte_id id;
  for (std::size_t i = 0; i < N; ++i) {
    int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    id.bytes[i] = std::uint8_t(hi << 4 | lo);
  }
  return id;
}

template struct byte_id<16>;
template struct byte_id<8>;
template struct byte_id<1>;

trace_id random_id_generator::new_trace_id() {
  trace_id id;
  do fill(id.bytes, next_random);
  while (!id.valid());
  return id;
}

span_id random_id_generator::new_span_id() {
  span_id id;
  do fill(id.bytes, next_random);
  while (!id.valid());
  return id;
}

trace_id sequential_id_generator::new_trace_id() {
  trace_id id;
  auto n = next_++;
  for (int j = 0; j < 8; ++j) id.bytes[15 - j] = std::uint8_t(n >> (8 * j));
  return id;
}

span_id sequential_id_generator::new_span_id() {
  span_id id;
  auto n = next_++;
  for (int j = 0; j < 8; ++j) id.bytes[7 - j] = std::uint8_t(n >> (8 * j));
  return id;
}

}  // namespace gistproxy::telemetry
