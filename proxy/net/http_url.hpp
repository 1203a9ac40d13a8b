// Parsed http:// or https:// base URLs (upstreams, the OTLP endpoint).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gistproxy::proxy {

struct http_url {
  bool tls = false;
  std::string host;       // without brackets for IPv6
  std::string port;       // always set: 80/443 by default
  std::string base_path;  // without a trailing slash; empty for "/"
  // The Host header value: host, plus :port when it is not the default.
  std::string host_header() const;
  // base_path + the client's target (path and query).
  std::string join(std::string_view target) const;
};

// Returns nullopt and sets `error` on anything but http(s)://host[:port][/path].
std::optional<http_url> parse_http_url(std::string_view url, std::string& error);

// The URL with everything between its scheme and the last '@' replaced by
// "***": for messages. RFC 3986 forbids an unencoded '/', '?' or '#' in the
// userinfo, but a user who types a password holding one ("http://u:pa/ss@h")
// must still never see it printed, and such a URL's "path" cannot be told
// from its userinfo: so the userinfo runs to the last '@' of the URL, and a
// path holding '@' is hidden too (a message may say less, never the secret).
std::string without_credentials(std::string_view url);

// Splits "HOST:PORT" ("[::1]:8080" for IPv6).
bool split_host_port(std::string_view s, std::string& host, std::string& port);

}  // namespace gistproxy::proxy
