// The offload service's request targets (proxy/service/service_routes.hpp):
// any bytes as a target never crash or grow, and a value percent-encoded
// byte for byte always decodes back to exactly itself.
#include "proxy/service/service_routes.hpp"

#include <cstdint>
#include <string>

using namespace gistproxy::proxy;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view target(reinterpret_cast<const char*>(data), size);
  const auto route = service_route_of(target);
  if (route.name.size() > size) __builtin_trap();
  (void)query_decodes(target);
  for (std::string_view name : {"pattern", "query", "raw", "model", "api", "start_line", ""}) {
    const auto v = query_parameter(target, name);
    if (v && v->size() > size) __builtin_trap();
  }
  // Round trip: the input as a value, every byte escaped.
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string encoded = "/v1/blobs/h?x=";
  for (unsigned char c : target) {
    encoded += '%';
    encoded += hex[c >> 4];
    encoded += hex[c & 15];
  }
  const auto back = query_parameter(encoded, "x");
  if (!back || *back != target || !query_decodes(encoded)) __builtin_trap();
  return 0;
}
