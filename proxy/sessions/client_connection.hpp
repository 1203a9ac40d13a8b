// A client connection, from the accept to its close: TCP_NODELAY, its place
// in the shard's session list (drain, connection limit), the TLS handshake,
// then its first bytes decide the transport: the HTTP/2 preface hands it to
// h2_session, anything else to http1_session. Every transport answers its
// requests through the one dispatch (request_dispatch).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "proxy/net/beast.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

awaitable<void> serve_client(shard& s, tcp_socket socket);
// The same over TLS with `tls` (the listener's context when it was accepted).
awaitable<void> serve_tls_client(shard& s, tcp_socket socket, std::shared_ptr<asio::ssl::context> tls);

}  // namespace gistproxy::proxy
