// The admin listener: GET /metrics (Prometheus text), /healthz, /readyz.
#pragma once

#include "proxy/net/beast.hpp"
#include "proxy/services.hpp"

namespace gistproxy::proxy {

// Accepts admin connections until the acceptor is closed.
awaitable<void> run_admin(services& svc, tcp_acceptor& acceptor);

}  // namespace gistproxy::proxy
