// A Responses WebSocket (the API's WebSocket mode, which Codex CLI uses by
// default): an HTTP/1.1 upgrade on a path whose endpoint speaks over a socket
// (rewrite::wire_format::speaks_over_socket). The upstream leg is opened
// first, with the client's fields, so an upstream that refuses the upgrade
// is answered with its own status (a client falls back to HTTP at once on
// 426); then the client's upgrade is accepted with the upstream's answer
// fields. Each client message runs as one request through the one dispatch
// (request_dispatch): a response.create becomes the HTTP Responses request
// it carries, answered on a ws_channel, its hops sent on the upstream socket
// (socket_hop), one message at a time. Other messages go upstream as they
// are. A binary message is closed with 1003, a drain with 1001; an upstream
// that closes or fails closes the client's socket.
#pragma once

#include <optional>

#include "proxy/net/beast.hpp"
#include "proxy/net/deadlines.hpp"
#include "proxy/runtime/services.hpp"
#include "rewrite/upstream_route.hpp"

namespace gistproxy::proxy {

// The routing of an HTTP/1.1 request that asks to become a Responses
// WebSocket this proxy serves (GET, Upgrade: websocket, a path whose
// endpoint speaks over a socket); nullopt for any other request, which is
// handled as HTTP (its Upgrade dropped, as a hop-by-hop field).
std::optional<rewrite::upstream_route> socket_route(const services& svc, const http::request_header<>& request);

template <class Stream>
awaitable<void> serve_websocket(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& deadline,
                                session_handle& handle, const rewrite::upstream_route& route,
                                http::request<http::string_body> upgrade);

}  // namespace gistproxy::proxy
