// The engine's names for what it did, and the tenant a request's key names.
#include "rewrite/blob/digest.hpp"
#include "rewrite/offload/engine.hpp"

namespace gistproxy::rewrite {

std::string_view fate_name(output_fate f) {
  switch (f) {
    case output_fate::offloaded: return "offloaded";
    case output_fate::below_threshold: return "below_threshold";
    case output_fate::excluded_by_policy: return "excluded_by_policy";
    case output_fate::not_exact: return "not_exact";
    case output_fate::too_large: return "too_large";
    case output_fate::store_failed: return "store_failed";
    case output_fate::store_full: return "store_full";
    case output_fate::already_reference: return "already_reference";
    case output_fate::not_worth_it: return "not_worth_it";
    case output_fate::read_back: return "read_back";
  }
  return "below_threshold";
}

std::string tenant_of(std::string_view api_key) {
  if (api_key.empty()) return "anonymous";
  return sha256_hex(api_key).substr(0, 16);
}

}  // namespace gistproxy::rewrite
