// Closing a connection the proxy ends while the client may still be
// sending (a refused request, a WebSocket closed for a message too big):
// closed at once, the unread bytes would make the kernel answer with a reset,
// which can destroy the client's copy of the proxy's last answer (its 413,
// its close frame) before the client reads it. So: stop sending, read and
// drop what still comes for at most 2 s and 64 MiB, then close.
#pragma once

#include "proxy/net/beast.hpp"
#include "proxy/net/deadlines.hpp"

namespace gistproxy::proxy {

awaitable<void> lingering_close(tcp_socket& socket, socket_deadline& deadline);

}  // namespace gistproxy::proxy
