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

// Splits "HOST:PORT" ("[::1]:8080" for IPv6).
bool split_host_port(std::string_view s, std::string& host, std::string& port);

}  // namespace gistproxy::proxy
