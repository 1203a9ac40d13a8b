#include "proxy/runtime/config_options.hpp"

#include <algorithm>

#include "proxy/net/admin_auth.hpp"

namespace gistproxy::proxy {

std::vector<option> listener_options() {
  return {
      {"listen", "HOST:PORT", "client listener (default 127.0.0.1:8080; port 0 picks one)",
       [](config& c, const std::string& v) { return c.listen = v, true; }},
      {"tls-cert", "FILE", "serve the client listener over TLS with this PEM certificate chain (with --tls-key); "
                           "ALPN offers h2 and http/1.1; reloaded on SIGHUP or when the files change",
       [](config& c, const std::string& v) { return c.tls_cert = v, !v.empty(); }},
      {"tls-key", "FILE", "the PEM private key of --tls-cert (unencrypted)",
       [](config& c, const std::string& v) { return c.tls_key = v, !v.empty(); }},
      {"tls-client-ca", "FILE", "with --tls-cert: require client certificates that chain to these PEM CAs",
       [](config& c, const std::string& v) { return c.tls_client_ca = v, !v.empty(); }},
      {"tls-reload-interval", "DURATION", "look at the TLS files this often and reload them when changed; 0: only "
                                          "on SIGHUP (default 1s)",
       [](config& c, const std::string& v) { return set_duration(c.tls_reload_interval, v); }},
      {"threads", "N", "I/O threads (default: one per core available)",
       [](config& c, const std::string& v) { return set_uint(c.threads, v, 0, 1023); }},
      {"max-body", "BYTES", "largest request body accepted, else 413 (default 64MiB)",
       [](config& c, const std::string& v) { return set_bytes(c.max_body_bytes, v); }},
      {"client-timeout", "DURATION", "receive a whole request once it started (default 60s)",
       [](config& c, const std::string& v) { return set_duration(c.client_timeout, v); }},
      {"idle-timeout", "DURATION", "close idle keep-alive client connections after (default 75s)",
       [](config& c, const std::string& v) { return set_duration(c.idle_timeout, v); }},
      {"drain-timeout", "DURATION", "on SIGTERM/SIGINT, wait this long for in-flight requests (default 30s)",
       [](config& c, const std::string& v) { return set_duration(c.drain_timeout, v); }},
      {"websocket-max-age", "DURATION", "close a Responses WebSocket with 1001 once it is this old, between two "
                                        "responses (default 60m, the OpenAI API's own bound; 0: none)",
       [](config& c, const std::string& v) { return set_duration(c.websocket_max_age, v); }},
      {"max-connections", "N",
       "client connections served at once; past it new ones wait in the kernel's backlog while /healthz and "
       "/metrics stay answerable (default: min(4096, half the descriptor limit))",
       [](config& c, const std::string& v) { return set_uint(c.max_connections, v, 1, 1'000'000); }},
      {"admin-listen", "HOST:PORT", "admin listener: the live view (GET /, /api/*), /metrics, /healthz, /readyz "
                                    "(default 127.0.0.1:9464)",
       [](config& c, const std::string& v) { return c.admin_listen = v, true; }},
      {"admin-token", "TOKEN", "the live view (GET /, /api/*) answers 401 without it (Authorization: Bearer TOKEN "
                               "or ?token=TOKEN); required when --admin-listen is not loopback (env GISTPROXY_ADMIN_TOKEN)",
       [](config& c, const std::string& v) { return c.admin_token = v, !v.empty(); }},
      {"admin-allowed-hosts", "NAME,NAME", "Host names the live view answers for besides loopback names and the "
                                           "--admin-listen address (else 421: a DNS-rebinding page's Host is its own "
                                           "name); * allows any",
       [](config& c, const std::string& v) { return parse_host_list(c.admin_allowed_hosts, v); }},
      {"admin-max-connections", "N", "admin connections open at once; a new one closes the least recently active "
                                     "(default 64)",
       [](config& c, const std::string& v) { return set_uint(c.admin_max_connections, v, 1, 100'000); }},
  };
}

bool parse_host_list(std::vector<std::string>& out, const std::string& v) {
  std::vector<std::string> hosts;
  for (std::size_t at = 0; at <= v.size();) {
    auto comma = std::min(v.find(',', at), v.size());
    auto name = v.substr(at, comma - at);
    if (name.size() > 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
    // A name or address without port, scheme or path: what a Host field's
    // host may be. One colon is a port; an IPv6 address has several.
    const auto colons = std::count(name.begin(), name.end(), ':');
    if (name.empty() || colons == 1 || name.find_first_of("/@[] \t") != std::string::npos) return false;
    hosts.push_back(std::move(name));
    at = comma + 1;
  }
  out = std::move(hosts);
  return true;
}

std::optional<std::string> listeners_problem(const config& c) {
  if (c.tls_cert.empty() != c.tls_key.empty()) return std::string("--tls-cert and --tls-key go together");
  if (!c.tls_client_ca.empty() && c.tls_cert.empty())
    return std::string("--tls-client-ca needs --tls-cert and --tls-key");
  // The live view shows which conversations run and what they page: off
  // loopback, only to whoever holds the token.
  if (!is_loopback_listen(c.admin_listen) && c.admin_token.empty())
    return "--admin-listen " + c.admin_listen +
           " is not loopback: set --admin-token (or GISTPROXY_ADMIN_TOKEN) to protect the live view";
  return std::nullopt;
}

}  // namespace gistproxy::proxy
