#include "proxy/net/admin_auth.hpp"

#include <openssl/crypto.h>

#include <algorithm>

#include "rewrite/request_target.hpp"

namespace gistproxy::proxy {
namespace {

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

// The host of HOST:PORT, [V6]:PORT or a bare host; empty when malformed
// (an unbracketed name with more than one colon).
std::string_view host_of(std::string_view host_port) {
  if (!host_port.empty() && host_port.front() == '[') {
    auto close = host_port.find(']');
    return close == std::string_view::npos ? std::string_view() : host_port.substr(1, close - 1);
  }
  const auto colon = host_port.find(':');
  if (colon != std::string_view::npos && host_port.find(':', colon + 1) != std::string_view::npos) return {};
  return host_port.substr(0, colon);
}

bool is_loopback_host(std::string_view host) {
  if (iequal(host, "localhost") || host == "::1") return true;
  // 127.0.0.0/8, as dotted digits only (a name that starts "127." is not an address).
  if (host.substr(0, 4) != "127.") return false;
  return host.find_first_not_of("0123456789.") == std::string_view::npos;
}

}  // namespace

bool is_loopback_listen(std::string_view host_port) {
  std::string_view host = host_port;
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    host = close == std::string_view::npos ? std::string_view() : host.substr(1, close - 1);
  } else if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  return is_loopback_host(host);
}

bool admin_authorized(std::string_view token, std::string_view authorization, std::string_view target) {
  if (token.empty()) return true;
  // credentials = auth-scheme 1*SP token68 (RFC 9110 §11.4)
  const auto space = authorization.find(' ');
  if (space != std::string_view::npos && iequal(authorization.substr(0, space), "Bearer")) {
    const auto credentials = authorization.substr(std::min(authorization.find_first_not_of(' ', space), authorization.size()));
    if (same(credentials, token)) return true;
  }
  return same(rewrite::query_value(target, "token"), token);
}

bool admin_host_allowed(std::string_view host_field, std::string_view listen, const std::vector<std::string>& allowed) {
  if (host_field.empty()) return true;
  auto host = host_of(host_field);
  if (host.size() > 1 && host.back() == '.') host.remove_suffix(1);  // "localhost." is localhost
  if (host.empty()) return false;
  if (is_loopback_host(host)) return true;
  const auto listening = host_of(listen);
  // An unspecified listen address (0.0.0.0, ::) names no host of its own.
  if (!listening.empty() && listening != "0.0.0.0" && listening != "::" && iequal(host, listening)) return true;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return a == "*" || iequal(host, a); });
}

}  // namespace gistproxy::proxy
