// One request's journey through the proxy, phase by phase (exchange.cpp runs
// them in this order, top to bottom):
//
//   receive  → identify the API endpoint, model and conversation trace      receive.cpp
//   rewrite  → offload oversized tool outputs to the blob store (fail-open) rewrite_phase.cpp
//   forward  → send upstream over a pooled connection                      upstream_hop.cpp
//   page in  → while the model calls read_blob, answer from the store and  page_in_loop.cpp,
//              ask again; one reader per kind of answer (relay, JSON, SSE)  *_reader.cpp, blob_pager.cpp
//   respond  → every byte to the client through one writer                client_writer.cpp
//   finish   → spans, metrics, access log, recording                       exchange_finish.cpp
//
// Failures before the response started become an error answer; after, an
// abnormal end of the client's response (or the API's SSE error event),
// never a silent clean end. A client that disconnects cancels the upstream.
#pragma once

#include "proxy/exchange/request_context.hpp"
#include "proxy/exchange/phases.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

class exchange {
 public:
  // `client`: the connection (HTTP/1.x) or stream (HTTP/2) the request came on.
  exchange(shard& s, client_channel& client, connection_memo& memo);

  // Runs all phases for one request; returns whether the connection may be reused.
  awaitable<bool> run(client_request& request);
  // Writes an error response for a request that never reached the phases (400, 413, …).
  awaitable<void> reject(client_request& request, proxy_error e);

 private:
  shard& shard_;
  services& svc_;
  client_channel& channel_;
  connection_memo& memo_;
};

}  // namespace gistproxy::proxy
