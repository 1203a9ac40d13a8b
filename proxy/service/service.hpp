// Offload as a service: the proxy's own work for frameworks that own their
// model calls and do not route them through gistproxy.
//
//   POST /v1/offload/{api}     a request body of that API → the body exactly as
//                              the proxy path would forward it, and what was
//                              offloaded (offload_endpoint.cpp); no upstream call
//   GET  /v1/blobs/{handle}    read_blob's page for query-string arguments, or
//   HEAD                       ?raw=1 the exact bytes (blob_endpoint.cpp)
//
// Both run on the proxy listener with the proxy path's phases (receive,
// rewrite, finish) and its tenant rules, so an offload made here pages in
// through the proxy and the reverse; metrics say source="api".
#pragma once

#include "proxy/exchange/request_context.hpp"
#include "proxy/net/proxy_error.hpp"
#include "proxy/service/service_routes.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

// Answer the request (receive, then the endpoint); the caller finishes the
// exchange. serve_offload: true when a turn was rewritten (to remember).
awaitable<bool> serve_offload(services& svc, request_context& ctx, std::string_view api);
awaitable<void> serve_blob(services& svc, request_context& ctx, std::string_view handle);

// The tenant of a request without an API key: every keyless caller shares it.
inline constexpr std::string_view anonymous_tenant = "anonymous";
// The service stores and reads blobs for a tenant: without a key, every
// keyless caller would write into (and read) one shared tenant, with nothing
// to tell them apart or hold to account. Refused unless the operator allows
// it (--offload-service-anonymous on).
inline proxy_error keyless_refusal() {
  return {error_kind::unauthorized,
          "the offload service needs the API's key (the same header the API takes): it names whose blobs these are"};
}

// A JSON answer from the service with its status (Content-Type application/json).
awaitable<void> answer_json(request_context& ctx, unsigned status, std::string body);

}  // namespace gistproxy::proxy
