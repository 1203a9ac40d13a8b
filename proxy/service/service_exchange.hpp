// The offload service's driver: one request to /v1/offload/{api} or
// /v1/blobs/{handle}, run through the proxy path's phases (receive, rewrite,
// finish; proxy/exchange/phases.hpp) and answered here, never forwarded.
// The one dispatch (proxy/sessions/request_dispatch) sends a request here or
// to the proxy path's driver (proxy/exchange/exchange.hpp) by its target.
#pragma once

#include "proxy/exchange/phases.hpp"
#include "proxy/service/service_routes.hpp"

namespace gistproxy::proxy {

class service_exchange {
 public:
  service_exchange(shard& s, client_channel& client, connection_memo& memo);

  // Answers the request; returns whether the connection may be reused.
  awaitable<bool> run(client_request& request, const service_route& route);

 private:
  services& svc_;
  client_channel& channel_;
  connection_memo& memo_;
};

}  // namespace gistproxy::proxy
