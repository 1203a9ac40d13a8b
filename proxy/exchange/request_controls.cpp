#include "proxy/exchange/request_controls.hpp"

#include "rewrite/text/field_value.hpp"

namespace gistproxy::proxy {
namespace {

using rewrite::text::trimmed;

std::string range_text(const threshold_range& r) { return std::to_string(r.low) + "-" + std::to_string(r.high); }

}  // namespace

request_controls read_request_controls(const http::request<http::string_body>& r, const config& cfg) {
  request_controls out;
  if (auto it = r.find(bypass_header); it != r.end()) {
    const auto v = trimmed(std::string_view(it->value()));
    if (v == "1" || v == "true") out.bypass = true;
    else if (v != "0" && v != "false")
      return out.error = "x-gistproxy-bypass must be 1 (or true) to bypass gistproxy, 0 (or false) not to", out;
  }
  if (auto it = r.find(threshold_header); it != r.end()) {
    if (!cfg.request_threshold_range)
      return out.error = "x-gistproxy-threshold is not allowed here: this gistproxy was started without "
                         "--allow-request-overrides",
             out;
    const auto& range = *cfg.request_threshold_range;
    const auto n = whole_number(trimmed(std::string_view(it->value())));
    if (!n || *n < range.low || *n > range.high)
      return out.error = "x-gistproxy-threshold must be a whole number of tokens within " + range_text(range) +
                         " (--allow-request-overrides)",
             out;
    out.threshold_tokens = *n;
  }
  return out;
}

}  // namespace gistproxy::proxy
