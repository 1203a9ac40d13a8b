// An HTTP/1.x client connection: read a request (fresh parser, explicit
// limits, a timeout before every read), answer it through the one dispatch
// (request_dispatch) on an HTTP/1 channel that frames the response
// (http1_channel), repeat while the connection is kept. client_connection
// hands a connection here when it does not start with the HTTP/2 preface.
#pragma once

#include <cstddef>

#include "proxy/net/beast.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

// Beast reads at most the buffer's spare capacity (512 bytes when empty): a
// 1 KB request would take three reads. The buffer is sized for a typical
// request while one is read (the connection's first read too), and given
// back once it is read.
constexpr std::size_t http1_read_buffer = 8 * 1024;

// Requests are read from and answers written to `stream` (the TCP socket, or
// TLS over it), whose TCP socket is `socket`. `buffer` holds the bytes read
// so far; `handle` is the connection's entry in the shard's session list
// (busy while a request is handled).
template <class Stream>
awaitable<void> serve_http1(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& deadline,
                            beast::flat_buffer& buffer, session_handle& handle);

}  // namespace gistproxy::proxy
