#include "proxy/sessions/request_dispatch.hpp"

#include "proxy/exchange/exchange.hpp"
#include "proxy/service/service_exchange.hpp"

namespace gistproxy::proxy {

awaitable<bool> dispatch(shard& sh, client_channel& channel, connection_memo& memo, client_request& request,
                         std::optional<proxy_error> refusal) {
  if (refusal) {
    exchange ex(sh, channel, memo);
    co_await ex.reject(request, std::move(*refusal));
    co_return false;
  }
  if (auto route = service_route_of(std::string_view(request.target())); route.what != service_route::kind::none) {
    service_exchange ex(sh, channel, memo);
    co_return co_await ex.run(request, route);
  }
  exchange ex(sh, channel, memo);
  co_return co_await ex.run(request);
}

}  // namespace gistproxy::proxy
