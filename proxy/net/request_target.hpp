// What a request line and its Host field may be (RFC 9112 §3.2, RFC 3986
// §5.2.4), checked before anything is forwarded: the target gistproxy
// forwards is always an origin-form path that stays under --upstream's base.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::proxy {

struct checked_target {
  std::string origin_form;  // "/path?query" to forward (dot segments removed)
  bool asterisk = false;    // "OPTIONS *": about the server, answered by gistproxy itself
  std::string error;        // set when the request must be refused (400)
};

// origin-form is kept; absolute-form ("http://host/v1/x?q", which a server
// MUST accept) becomes its path and query; "*" only with OPTIONS. A
// fragment ("#…", which a client must not send) is dropped. Dot
// segments are removed; a path that climbs above the root, or spells a dot
// segment in percent-encoding (%2e), is refused, and so is a query past the
// bounds of rewrite::query_pairs (64 KiB, 1,000 parameters).
checked_target check_request_target(std::string_view method, std::string_view target);

// RFC 9112 §3.2: exactly one Host on HTTP/1.1 (at most one on 1.0), with a
// valid uri-host[:port] value (possibly empty); else why not.
std::optional<std::string> host_field_problem(unsigned version, std::size_t host_fields, std::string_view host);

// The target as a request refused before it was checked may show it in the
// access log, its span and its record: the fragment dropped, an
// absolute-form's scheme and authority dropped (a password in its userinfo
// must reach no sink), the rest as sent (a refused target is not normalised).
// A target of no known form loses all up to its last '@' ("user:pw@host:443").
std::string target_shown(std::string_view target);

}  // namespace gistproxy::proxy
