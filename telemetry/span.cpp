#include "telemetry/span.hpp"

#include "rewrite/text/utf8.hpp"

namespace gistproxy::telemetry {

void span::set(std::string_view key, attribute_value value) {
  if (!recording) return;
  // Text attributes often come from outside (a model or tool name, a call
  // id): bound them and keep them valid UTF-8, so a 1 MB tool name costs a
  // span 512 bytes and no exporter meets bytes it cannot write.
  if (auto* text = std::get_if<std::string>(&value); text && (text->size() > max_text_bytes || !rewrite::text::is_valid_utf8(*text)))
    *text = rewrite::text::bounded_utf8(*text, max_text_bytes).text;
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
