#include "proxy/net/admin_auth.hpp"

#include <openssl/crypto.h>

#include "proxy/net/request_target.hpp"

namespace gistproxy::proxy {
namespace {

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
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
