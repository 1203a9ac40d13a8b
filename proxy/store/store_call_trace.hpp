// Which request a store call on this thread works for, so that a slow call
// to a remote store becomes a span of that request's trace. Set around the
// store work an exchange hands to the store pool (rewrite, page-in).
#pragma once

#include "telemetry/trace_context.hpp"

namespace gistproxy::store {

struct store_call_parent {
  telemetry::trace_id trace{};
  telemetry::span_id span{};
  bool set = false;
};

// The calling thread's current parent (unset outside a request's store work).
store_call_parent& current_store_call_parent();

class store_call_scope {
 public:
  store_call_scope(const telemetry::trace_id& trace, const telemetry::span_id& span) : saved_(current_store_call_parent()) {
    current_store_call_parent() = {trace, span, true};
  }
  ~store_call_scope() { current_store_call_parent() = saved_; }
  store_call_scope(const store_call_scope&) = delete;
  store_call_scope& operator=(const store_call_scope&) = delete;

 private:
  store_call_parent saved_;
};

}  // namespace gistproxy::store
