// A client connection: read a request (fresh parser, explicit limits, a
// timeout before every read), hand it to an exchange, repeat while keep-alive.
#pragma once

#include "proxy/net/beast.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

awaitable<void> serve_client(shard& s, tcp_socket socket);

}  // namespace gistproxy::proxy
