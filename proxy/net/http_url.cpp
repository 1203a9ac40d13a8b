#include "proxy/net/http_url.hpp"

namespace gistproxy::proxy {

bool split_host_port(std::string_view s, std::string& host, std::string& port) {
  if (!s.empty() && s.front() == '[') {
    auto close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') return false;
    host = std::string(s.substr(1, close - 1));
    port = std::string(s.substr(close + 2));
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string_view::npos) return false;
    host = std::string(s.substr(0, colon));
    port = std::string(s.substr(colon + 1));
  }
  if (host.empty() || port.empty()) return false;
  for (char c : port)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string without_credentials(std::string_view url) {
  const auto scheme_end = url.find("://");
  const std::size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const auto at = url.rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  return std::string(url.substr(0, start)) + "***" + std::string(url.substr(at));
}

std::optional<http_url> parse_http_url(std::string_view url, std::string& error) {
  auto shown = [url] { return "'" + without_credentials(url) + "'"; };
  http_url u;
  std::string_view rest;
  if (url.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    error = shown() + " is not an http:// or https:// URL";
    return std::nullopt;
  }
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos || path.find_first_of("?#") != std::string_view::npos) {
    error = shown() + ": credentials, query and fragment are not allowed in a base URL";
    return std::nullopt;
  }
  bool has_port = authority.find(':') != std::string_view::npos &&
                  (authority.front() != '[' || authority.find("]:") != std::string_view::npos);
  if (has_port) {
    if (!split_host_port(authority, u.host, u.port)) {
      error = shown() + ": bad host or port";
      return std::nullopt;
    }
  } else {
    u.host = std::string(authority.front() == '[' && authority.back() == ']' ? authority.substr(1, authority.size() - 2)
                                                                              : authority);
    u.port = u.tls ? "443" : "80";
  }
  if (u.host.empty()) {
    error = shown() + ": no host";
    return std::nullopt;
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  u.base_path = std::string(path);
  return u;
}

std::string http_url::host_header() const {
  bool v6 = host.find(':') != std::string::npos;
  std::string h = v6 ? "[" + host + "]" : host;
  if ((tls && port != "443") || (!tls && port != "80")) h += ":" + port;
  return h;
}

std::string http_url::join(std::string_view target) const {
  std::string out = base_path;
  if (target.empty() || target.front() != '/') out += '/';
  out += target;
  return out;
}

}  // namespace gistproxy::proxy
