#include "telemetry/span.hpp"

namespace gistproxy::telemetry {

void span::set(std::string_view key, attribute_value value) {
  if (!recording) return;
  for (auto& a : attributes) {
    if (a.key == key) {
      a.value = std::move(value);
      return;
    }
  }
  attributes.push_back({std::string(key), std::move(value)});
}

const attribute_value* span::find(std::string_view key) const {
  for (const auto& a : attributes)
    if (a.key == key) return &a.value;
  return nullptr;
}

}  // namespace gistproxy::telemetry
