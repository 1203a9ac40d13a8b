#include "proxy/store/store_call_trace.hpp"

namespace gistproxy::store {

store_call_parent& current_store_call_parent() {
  thread_local store_call_parent parent;
  return parent;
}

}  // namespace gistproxy::store
