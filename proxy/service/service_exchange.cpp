#include "proxy/service/service_exchange.hpp"

#include "proxy/service/service.hpp"

namespace gistproxy::proxy {

service_exchange::service_exchange(shard& s, client_channel& client, connection_memo& memo)
    : svc_(s.svc()), channel_(client), memo_(memo) {}

awaitable<bool> service_exchange::run(client_request& request, const service_route& route) {
  request_context ctx(request, channel_, true, svc_.recorder != nullptr, memo_);  // kept as the channel decides
  std::optional<proxy_error> internal;
  bool rewritten = false;
  try {
    if (route.what == service_route::kind::offload) rewritten = co_await serve_offload(svc_, ctx, route.name);
    else co_await serve_blob(svc_, ctx, route.name);
  } catch (const std::exception& ex) {
    internal = proxy_error{error_kind::internal, ex.what()};  // as on the proxy path: 500, keep serving
  }
  if (internal) {
    ctx.out.reply().keep_alive = false;
    co_await ctx.out.error(*internal);
  }
  finish(svc_, ctx);
  if (rewritten && !internal) remember_turn(svc_, ctx);  // last: it takes the body
  co_return ctx.out.reply().keep_alive;
}

}  // namespace gistproxy::proxy
