// The whitespace around an HTTP field value (RFC 9110 §5.6.3: OWS is SP and
// HTAB, nothing else): every reader of a field's value, a credential or a
// control or a content coding, trims it here, so none of them can disagree
// with another about what a blank value is.
#pragma once

#include <string_view>

namespace gistproxy::rewrite::text {

inline bool is_ows(char c) { return c == ' ' || c == '\t'; }

// The value without the OWS before and after it.
inline std::string_view trimmed(std::string_view v) {
  while (!v.empty() && is_ows(v.front())) v.remove_prefix(1);
  while (!v.empty() && is_ows(v.back())) v.remove_suffix(1);
  return v;
}

// Empty or only OWS: a field sent with no value, which counts as not sent.
inline bool blank(std::string_view v) { return trimmed(v).empty(); }

}  // namespace gistproxy::rewrite::text
