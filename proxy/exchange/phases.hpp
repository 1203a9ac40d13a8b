// The phases one request goes through, each in its own file, and the steps
// they share. Two drivers run them: the proxy path (exchange.cpp: receive →
// rewrite → forward and page in → finish) and the offload service
// (proxy/service/service_exchange.cpp: receive → rewrite or page → finish).
#pragma once

#include <optional>

#include "proxy/exchange/request_context.hpp"
#include "proxy/net/proxy_error.hpp"
#include "proxy/runtime/services.hpp"
#include "rewrite/upstream_route.hpp"

namespace gistproxy::proxy {

// Whose request it is (tenant.cpp); needs the endpoint, or the one whose
// credential fields name it (a read of stored state has none of its own).
std::string tenant_of_request(services& svc, request_context& ctx);
std::string tenant_of_request(services& svc, request_context& ctx, const rewrite::endpoint& by);
// The credential that names the tenant (a view into the request, or the
// proxy's own AWS access key id); empty without one. Never logged.
std::string_view tenant_credential(services& svc, const request_context& ctx);
// The credential the endpoint's fields carry in the request, by the rule
// that names a tenant (an empty Authorization or a bare "Bearer" is none);
// empty without one. The offload service's reads choose their endpoint by it.
std::string_view endpoint_credential(const client_request& r, const rewrite::endpoint& d);
// Why the request names no one tenant (a credential field of its endpoint
// sent more than once: whose request it is cannot be told, and the upstream
// may honour the other one), or empty. Answered 400 on every path.
std::string ambiguous_credential(const client_request& r, const rewrite::endpoint& d);
// A token count whose body wraps the request it counts (count_envelope.cpp):
// unwrap_count lets the phases see the wrapped request (or, when it cannot be
// taken out, no endpoint: forwarded as sent); restore_count, once the rewrite
// is done, puts the body as sent back and wraps the rewritten request.
void unwrap_count(request_context& ctx);
void restore_count(request_context& ctx);
// The turn memory (turn_reuse.cpp): the turn_reuse every walk of a received
// body goes through, with the conversation's previous turn when `may_help`
// and one is remembered; and filing this turn once the exchange is over.
void recall_turn(services& svc, request_context& ctx, bool may_help);
void remember_turn(services& svc, request_context& ctx);

// The phases, each in its own file.
void receive(services& svc, request_context& ctx);
// Part of receive (routing.cpp): the upstream family and endpoint of the
// request, and the credential it carries that its family must not see.
void route(services& svc, request_context& ctx);
// The routing of a request as route() decides it (a transport that must
// open its upstream before the request's messages arrive asks this).
rewrite::upstream_route route_of(const services& svc, const client_request& request);
// Whether that routing would carry a credential to a provider it does not
// belong to (route() refuses such a request as credential_mismatch).
bool misdirects(const services& svc, const rewrite::upstream_route& route);
// The 400 for a request whose credential belongs to another provider; nullopt when none does.
std::optional<proxy_error> credential_mismatch(const request_context& ctx);
// `report`: where the engine's report goes when the caller wants it (the offload service).
awaitable<void> rewrite(services& svc, request_context& ctx, rewrite::rewrite_report* report = nullptr);
// A page-in found a blob this request offloaded missing or damaged: the
// turn's offloads are stored again from the request's own bytes. Blocks (the
// store pool); does nothing for a request that offloaded nothing.
void store_again(services& svc, const request_context& ctx);
// The page-in hop of a turn whose read-backs just made its conversation keep
// outputs inline (paging churn): the client's turn rewritten again with the
// conversation's record as it now stands, to be sent in place of a
// continuation with pages, so the provider caches the prefix the next turn
// sends. nullopt when it cannot be had without storing (then pages go as
// before) or would not differ.
awaitable<std::optional<std::string>> turn_with_rereads_inline(services& svc, request_context& ctx);
// Prompt-cache health: whether this turn's forwarded prefix extends the
// previous turn's, and who broke it if not (gistproxy_prefix_breaks_total).
void track_prefix(services& svc, request_context& ctx);
awaitable<void> forward(services& svc, shard& sh, request_context& ctx, client_channel& client);
// The 508 for a request that carries this process's own Via entry: it came
// back to the gistproxy that forwarded it (proxy/net/via_marker.hpp), and
// forwarding it again would nest requests until descriptors ran out. nullopt
// when it did not (another gistproxy's entry is no loop).
std::optional<proxy_error> forwarding_loop(const services& svc, const request_context& ctx);
void finish(services& svc, request_context& ctx);
// The request's model's price (null when unpriced), looked up once per model
// on the connection: the rewrite and finish phases both ask for it.
const rewrite::price_match* price_of(services& svc, request_context& ctx);

}  // namespace gistproxy::proxy
