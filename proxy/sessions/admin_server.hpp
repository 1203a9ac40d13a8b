// The admin listener: GET (or HEAD) / and /api/* (the live view), /metrics
// (Prometheus text), /healthz, /readyz. At most --admin-max-connections
// connections (a new one closes the least recently active); accept failures
// back off instead of spinning.
#pragma once

#include "proxy/net/beast.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

// Accepts admin connections until the acceptor is closed.
awaitable<void> run_admin(services& svc, tcp_acceptor& acceptor);

}  // namespace gistproxy::proxy
