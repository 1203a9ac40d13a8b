// Where every transport's requests go, written once: HTTP/1.x's request
// loop (http1_session), each HTTP/2 stream (h2_session), and the next
// transport too, call this and nothing else to have a request answered.
//
//   refused  → a request the transport refused before it was read whole
//              (400, 408, 413, 431): answered with its refusal, as the proxy
//              path would answer it (span, metrics, access log)
//   service  → the offload service's own paths (/v1/offload/…, /v1/blobs/…):
//              answered by its driver, service_exchange, never forwarded
//   proxy    → every other request: the proxy path's driver, exchange
#pragma once

#include <optional>

#include "proxy/exchange/request_context.hpp"
#include "proxy/net/client_channel.hpp"
#include "proxy/net/proxy_error.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

// Answers `request` on `channel` (`refusal`: set when the transport refused
// it, whose head is then all there is). `memo`: the connection's, shared by
// its requests. Returns whether the connection may carry another request.
awaitable<bool> dispatch(shard& sh, client_channel& channel, connection_memo& memo, client_request& request,
                         std::optional<proxy_error> refusal);

}  // namespace gistproxy::proxy
