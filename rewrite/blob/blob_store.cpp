#include "rewrite/blob/blob_store.hpp"

namespace gistproxy::rewrite {

std::string_view blob_error_name(blob_error e) {
  switch (e) {
    case blob_error::none: return "ok";
    case blob_error::not_found: return "not_found";
    case blob_error::ambiguous: return "ambiguous";
    case blob_error::expired: return "expired";
    case blob_error::integrity: return "integrity";
    case blob_error::too_large: return "too_large";
    case blob_error::io: return "io";
    case blob_error::full: return "full";
  }
  return "io";
}

}  // namespace gistproxy::rewrite
