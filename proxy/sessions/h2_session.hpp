// An HTTP/2 client connection (h2c with prior knowledge, or h2 over TLS):
// client_connection hands it over when the connection starts with the HTTP/2
// preface. Each request stream goes through the same dispatch as an HTTP/1.1
// request (request_dispatch), concurrently, each in its own coroutine on the connection's shard; their responses go out as frames
// on their stream (h2_stream). Upstreams stay HTTP/1.1.
#pragma once

#include "proxy/net/beast.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

// Frames are read from and written to `stream` (the TCP socket, or TLS over
// it), whose TCP socket is `socket`. `buffer` holds the bytes read so far
// (the preface at least); `handle` is the connection's entry in the shard's
// session list (busy while streams run).
template <class Stream>
awaitable<void> serve_h2(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& deadline,
                         beast::flat_buffer& buffer, session_handle& handle);

}  // namespace gistproxy::proxy
