// The offload service's routes and query strings (pure: no I/O), read from
// hostile request targets: bounded by the header limits, decoded exactly.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::proxy {

struct service_route {
  enum class kind { none, offload, blob };
  kind what = kind::none;
  std::string_view name;  // offload: the API named in the path; blob: the handle as sent
};

// Which service endpoint a request target names (none: proxy it).
service_route service_route_of(std::string_view target);

// The first query parameter so named (names read as rewrite::query_pairs
// reads them), its value percent- and '+'-decoded; nullopt when absent or not
// decodable. The target is bounded by the header limits.
std::optional<std::string> query_parameter(std::string_view target, std::string_view name);

// Whether every parameter of the target's query string decodes (a value the
// service cannot read is refused, never taken as absent).
bool query_decodes(std::string_view target);

}  // namespace gistproxy::proxy
