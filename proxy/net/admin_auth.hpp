// Who may read the admin listener's live view (the page and /api/*): anyone
// on a loopback listener without --admin-token; with a token, only a request
// that presents it (Authorization: Bearer TOKEN, or ?token=TOKEN for a
// browser opening the page). And only under a Host that names this listener:
// a page of another site whose name an attacker re-points at 127.0.0.1 (DNS
// rebinding) sends its own name as Host. Pure functions, unit-tested.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gistproxy::proxy {

// Whether a HOST:PORT listen address binds loopback only (127.0.0.0/8, ::1, localhost).
bool is_loopback_listen(std::string_view host_port);

// Whether the request presents `token` (always true when `token` is empty).
// The scheme is case-insensitive (RFC 9110 §11.1): Bearer, bearer, BEARER.
// Compared in constant time: the answer's timing tells nothing of the token.
bool admin_authorized(std::string_view token, std::string_view authorization, std::string_view target);

// Whether a request's Host field (name[:port], any case, a trailing dot
// allowed) names this listener: a loopback name (localhost, 127.0.0.0/8,
// [::1]), the host of `listen` (HOST:PORT), or one of `allowed`
// (--admin-allowed-hosts; "*" allows any). A request without Host passes:
// browsers always send one.
bool admin_host_allowed(std::string_view host_field, std::string_view listen, const std::vector<std::string>& allowed);

}  // namespace gistproxy::proxy
