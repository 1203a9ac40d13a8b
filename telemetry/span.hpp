// The span model: what one timed step of a request did. Exporters turn it into
// a span-log line or OTLP JSON; nothing here knows about either.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "telemetry/ids.hpp"

namespace gistproxy::telemetry {

// Values follow the OTLP enums so exporters can write them as integers.
enum class span_kind : int { internal = 1, server = 2, client = 3 };
enum class span_status : int { unset = 0, ok = 1, error = 2 };

using attribute_value = std::variant<std::string, std::int64_t, double, bool>;

struct attribute {
  std::string key;
  attribute_value value;
};

struct span {
  trace_id trace;
  span_id id;
  span_id parent;  // invalid (all zero) for a root span
  std::string name;
  span_kind kind = span_kind::internal;
  std::uint64_t start_unix_nano = 0;
  std::uint64_t end_unix_nano = 0;
  std::vector<attribute> attributes;
  span_status status = span_status::unset;
  std::string status_message;
  // False when no exporter is configured: attribute writes are skipped, so
  // an unobserved proxy pays nothing for building them.
  bool recording = true;

  // The most a text attribute keeps (cut on a character, ending in "…").
  static constexpr std::size_t max_text_bytes = 512;
  // Sets or replaces an attribute. Integers of any width become int64, as OTLP stores them.
  // Keys are views: an unobserved proxy builds no key strings either.
  void set(std::string_view key, attribute_value value);
  void set(std::string_view key, const char* value) { set_text(key, value); }
  // A text attribute from a view: the string is built only when recording.
  void set_text(std::string_view key, std::string_view value) {
    if (recording) set(key, attribute_value(std::string(value)));
  }
  template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  void set(std::string_view key, I value) {
    set(key, attribute_value(std::int64_t(value)));
  }
  const attribute_value* find(std::string_view key) const;
  void fail(std::string message) {
    status = span_status::error;
    status_message = std::move(message);
  }
};

}  // namespace gistproxy::telemetry
