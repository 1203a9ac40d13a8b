// Egress through an outbound HTTP proxy: which proxy (if any) an upstream is
// reached through, from --egress-proxy or the environment as curl and the SDKs
// read it, and the CONNECT request and answer checks. Pure: no sockets (the
// awaitable that runs a CONNECT is egress_tunnel.hpp).
//
// The proxy's credentials live only in egress_proxy::authorization and go
// only into the CONNECT request: every message says egress_proxy::name().
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proxy/net/http_url.hpp"  // without_credentials, for messages naming a proxy URL
#include "proxy/net/proxy_error.hpp"

namespace gistproxy::proxy {

struct egress_proxy {
  std::string host;           // without brackets for IPv6
  std::string port;           // 80 when the URL gives none
  std::string authorization;  // "Basic …" from the URL's user:password, or empty; never logged
  // "host:port" ("[v6]:port"): all that logs, spans and errors say about it.
  std::string name() const;
};

// http://[USER[:PASSWORD]@]HOST[:PORT][/], or HOST[:PORT] (http assumed).
// USER and PASSWORD are percent-decoded. Nullopt and `error` otherwise
// (https:// and socks proxies are not supported); `error` never holds the
// credentials.
std::optional<egress_proxy> parse_egress_proxy(std::string_view url, std::string& error);

// Whether a no_proxy list exempts host:port (host as in http_url: IPv6
// without brackets). Entries are separated by commas or blanks and compared
// without case: "*" exempts every host; a name exempts itself and its
// subdomains ("example.com" and ".example.com" both exempt example.com and
// api.example.com, as curl and Python do); an IP address or CIDR block
// ("10.0.0.0/8", "::1", "[::1]") exempts the addresses it covers; ":PORT"
// after an entry limits it to that port. Loopback is not exempt unless listed.
bool no_proxy_matches(std::string_view no_proxy, std::string_view host, std::string_view port);

// Where the proxy settings come from: --egress-proxy, else the environment.
struct egress_settings {
  std::string flag;         // --egress-proxy: a URL, "none", or empty (the environment decides)
  std::string https_proxy;  // https_proxy, else HTTPS_PROXY: for https upstreams
  std::string http_proxy;   // http_proxy, else HTTP_PROXY: for http upstreams
  std::string no_proxy;     // no_proxy, else NO_PROXY: hosts reached directly, whichever proxy applies
};

// The proxy to reach host:port through (tls: an https upstream), or nullopt
// for a direct connection. A setting that applies but does not parse sets
// `error` (naming its source, never its credentials) and returns nullopt.
std::optional<egress_proxy> egress_route(const egress_settings& settings, bool tls, std::string_view host,
                                         std::string_view port, std::string& error);

// "CONNECT host:port HTTP/1.1" with Host and, when the proxy has credentials,
// Proxy-Authorization.
std::string connect_request(const egress_proxy& via, std::string_view host, std::string_view port);

// The verdict on a CONNECT answer's status: nothing for 2xx; 407 says the
// proxy wants (other) credentials; any other status says it refused.
std::optional<proxy_error> judge_connect_status(const egress_proxy& via, unsigned status);

}  // namespace gistproxy::proxy
