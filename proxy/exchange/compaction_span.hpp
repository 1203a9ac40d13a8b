// The `compaction` span of one offloaded tool output (child of its request's
// span): shapes and handles only, never bytes. Shared by serve and replay.
#pragma once

#include "rewrite/offload/engine.hpp"
#include "telemetry/tracer.hpp"

namespace gistproxy::proxy {

void emit_compaction_span(telemetry::tracer& tracer, const telemetry::span& request, const rewrite::offload_record& o);

}  // namespace gistproxy::proxy
