// TLS over a client's TCP socket. Beast's ssl_stream rather than Asio's
// ssl::stream: it gathers a write's buffers (a head and a body piece) into
// one TLS record instead of one record per buffer.
#pragma once

#include <boost/beast/ssl/ssl_stream.hpp>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

using tls_stream = beast::ssl_stream<tcp_socket>;

}  // namespace gistproxy::proxy
