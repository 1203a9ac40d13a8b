// Waiting for a client's next bytes without holding a buffer for them.
//
// A keep-alive connection spends most of its life idle between requests. A
// read started then needs its buffer before any byte arrives (8 KiB per
// connection, for nothing), and Asio tries it at once: a recv that finds
// nothing (EAGAIN) and then waits. Waiting for readability first costs the
// same one system call (Asio re-arms the descriptor with epoll_ctl) but no
// buffer; the read that follows finds its bytes on its first try.
//
// Only a plain TCP socket can be waited on this way: TLS may hold decrypted
// bytes already read from the socket, so over TLS the read itself waits.
#pragma once

#include <type_traits>

#include "proxy/net/beast.hpp"

namespace gistproxy::proxy {

// Whether a connection over `Stream` waits for its client's bytes before it
// gives its next read a buffer: the TCP socket itself does; TLS reads.
template <class Stream>
constexpr bool waits_before_reading = std::is_same_v<Stream, tcp_socket>;

// Completes when `socket` has bytes (or an end, or an error) to read. Awaited
// in the caller's frame (no coroutine of its own: this is once per request).
inline auto bytes_to_read(tcp_socket& socket) { return socket.async_wait(tcp_socket::wait_read, use_nothrow); }

}  // namespace gistproxy::proxy
