// Who may read the admin listener's live view (the page and /api/*): anyone
// on a loopback listener without --admin-token; with a token, only a request
// that presents it (Authorization: Bearer TOKEN, or ?token=TOKEN for a
// browser opening the page). Pure functions, unit-tested.
#pragma once

#include <string_view>

namespace gistproxy::proxy {

// Whether a HOST:PORT listen address binds loopback only (127.0.0.0/8, ::1, localhost).
bool is_loopback_listen(std::string_view host_port);

// Whether the request presents `token` (always true when `token` is empty).
// Compared in constant time: the answer's timing tells nothing of the token.
bool admin_authorized(std::string_view token, std::string_view authorization, std::string_view target);

}  // namespace gistproxy::proxy
