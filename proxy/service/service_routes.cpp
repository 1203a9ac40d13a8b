#include "proxy/service/service_routes.hpp"
#include "rewrite/request_target.hpp"

namespace gistproxy::proxy {
namespace {

constexpr std::string_view offload_prefix = "/v1/offload/";
constexpr std::string_view blobs_prefix = "/v1/blobs/";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> decoded(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '+') {
      out += ' ';
    } else if (v[i] != '%') {
      out += v[i];
    } else {
      if (i + 2 >= v.size()) return std::nullopt;  // a cut escape
      const int hi = hex_value(v[i + 1]), lo = hex_value(v[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += char(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

}  // namespace

service_route service_route_of(std::string_view target) {
  const auto path = rewrite::path_of(target);
  if (path.starts_with(offload_prefix)) return {service_route::kind::offload, path.substr(offload_prefix.size())};
  if (path.starts_with(blobs_prefix)) return {service_route::kind::blob, path.substr(blobs_prefix.size())};
  return {};
}

std::optional<std::string> query_parameter(std::string_view target, std::string_view name) {
  const auto value = rewrite::first_query_value(target, name);
  return value ? decoded(*value) : std::nullopt;
}

bool query_decodes(std::string_view target) {
  for (const auto& pair : rewrite::query_pairs(target))
    if (!decoded(pair.name) || !decoded(pair.value)) return false;
  return true;
}

}  // namespace gistproxy::proxy
