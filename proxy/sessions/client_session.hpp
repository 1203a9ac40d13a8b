// A client connection: read a request (fresh parser, explicit limits, a
// timeout before every read), hand it to an exchange, repeat while keep-alive.
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
