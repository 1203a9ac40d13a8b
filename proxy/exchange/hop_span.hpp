// The span of one upstream hop, whatever carries it (the pool's HTTP
// connection, a WebSocket's upstream socket): its GenAI names, its hop
// number and group, started under the request's span; and its failed end.
#pragma once

#include <string_view>

#include "proxy/exchange/request_context.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

// Started as a child of the request's span, named for the endpoint's
// operation and model; `hop` counts from 0 (the client's own request).
telemetry::span start_hop_span(services& svc, const request_context& ctx, int hop);

// Ends `span` as failed with `reason` (also its error.type).
void end_failed_hop_span(services& svc, telemetry::span& span, std::string_view reason);

}  // namespace gistproxy::proxy
