// Trace and span identifiers (W3C trace-context sizes) and their hex forms.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::telemetry {

template <std::size_t N>
struct byte_id {
  std::array<std::uint8_t, N> bytes{};

  // All-zero ids are invalid per W3C trace-context; they mean "none" here.
  bool valid() const {
    for (auto b : bytes)
      if (b != 0) return true;
    return false;
  }
  std::string hex() const;
  static std::optional<byte_id> from_hex(std::string_view s);
  friend bool operator==(const byte_id&, const byte_id&) = default;
};

using trace_id = byte_id<16>;
using span_id = byte_id<8>;

// Random ids from a per-thread generator seeded from the OS; cheap on the request path.
class id_generator {
 public:
  virtual ~id_generator() = default;
  virtual trace_id new_trace_id() = 0;
  virtual span_id new_span_id() = 0;
};

class random_id_generator final : public id_generator {
 public:
  trace_id new_trace_id() override;
  span_id new_span_id() override;
};

// Sequential ids for tests: deterministic, never zero.
class sequential_id_generator final : public id_generator {
 public:
  trace_id new_trace_id() override;
  span_id new_span_id() override;

 private:
  std::uint64_t next_ = 1;
};

}  // namespace gistproxy::telemetry
