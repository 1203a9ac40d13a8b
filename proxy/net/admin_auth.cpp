#include "proxy/net/admin_auth.hpp"

#include <openssl/crypto.h>

namespace gistproxy::proxy {
namespace {

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The value of `name` in the target's query string (as sent: a token is URL-safe text).
std::string_view query_value(std::string_view target, std::string_view name) {
  auto q = target.find('?');
  if (q == std::string_view::npos) return {};
  auto query = target.substr(q + 1);
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    if (pair.size() > name.size() && pair.substr(0, name.size()) == name && pair[name.size()] == '=')
      return pair.substr(name.size() + 1);
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return {};
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
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8, as dotted digits only (a name that starts "127." is not an address).
  if (host.substr(0, 4) != "127.") return false;
  return host.find_first_not_of("0123456789.") == std::string_view::npos;
}

bool admin_authorized(std::string_view token, std::string_view authorization, std::string_view target) {
  if (token.empty()) return true;
  constexpr std::string_view bearer = "Bearer ";
  if (authorization.size() > bearer.size() && authorization.substr(0, bearer.size()) == bearer &&
      same(authorization.substr(bearer.size()), token))
    return true;
  return same(query_value(target, "token"), token);
}

}  // namespace gistproxy::proxy
