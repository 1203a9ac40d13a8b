// Per-request control headers, for an operator who fronts everything and
// must exempt one job, one eval run or one debugging session without a
// redeploy:
//   x-gistproxy-bypass: 1      the request goes upstream untouched (nothing
//                              offloaded, no read_blob offered), still
//                              recorded and counted (rewrite_failures{reason="bypass"})
//   x-gistproxy-threshold: N   this request's offload threshold in tokens,
//                              only within the range --allow-request-overrides
//                              allows (off by default)
// Both are read in the receive phase and never reach the upstream; a value
// that is not one of these is answered 400 with the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/runtime/config.hpp"
#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

inline constexpr std::string_view bypass_header = "x-gistproxy-bypass";
inline constexpr std::string_view threshold_header = "x-gistproxy-threshold";

struct request_controls {
  bool bypass = false;
  std::optional<std::uint64_t> threshold_tokens;
  std::string error;  // why the request is refused (400); empty when it is not
};

request_controls read_request_controls(const http::request<http::string_body>& r, const config& cfg);

}  // namespace gistproxy::proxy
