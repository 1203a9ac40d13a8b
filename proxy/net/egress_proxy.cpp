#include "proxy/net/egress_proxy.hpp"

#include <arpa/inet.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace gistproxy::proxy {
namespace {

constexpr std::size_t max_host_chars = 255;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += char(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string basic_authorization(std::string_view user, std::string_view password) {
  const std::string plain = std::string(user) + ":" + std::string(password);
  std::string encoded(4 * ((plain.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                                reinterpret_cast<const unsigned char*>(plain.data()), int(plain.size()));
  encoded.resize(std::size_t(n));
  return "Basic " + encoded;
}

// A host name's characters (letters, digits, '-', '.', '_'), or an IPv6
// address's; nothing that could end a request line or a header.
bool valid_host(std::string_view host, bool bracketed) {
  if (host.empty() || host.size() > max_host_chars) return false;
  for (unsigned char c : host) {
    const bool ok = bracketed ? (std::isxdigit(c) || c == ':' || c == '.')
                              : (std::isalnum(c) || c == '-' || c == '.' || c == '_');
    if (!ok) return false;
  }
  return true;
}

bool valid_port(std::string_view port) {
  if (port.empty() || port.size() > 5) return false;
  for (char c : port)
    if (c < '0' || c > '9') return false;
  const int n = std::stoi(std::string(port));
  return n >= 1 && n <= 65535;
}

// Splits HOST[:PORT] or [V6][:PORT]; false on anything else.
bool split_authority(std::string_view authority, std::string& host, std::string& port) {
  std::string_view h = authority, p;
  bool bracketed = false;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return false;
    h = authority.substr(1, close - 1);
    bracketed = true;
    const auto rest = authority.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || rest.size() == 1)) return false;
    if (!rest.empty()) p = rest.substr(1);
  } else if (auto colon = authority.find(':'); colon != std::string_view::npos) {
    h = authority.substr(0, colon);
    p = authority.substr(colon + 1);
    if (p.empty()) return false;
  }
  if (!valid_host(h, bracketed) || (!p.empty() && !valid_port(p))) return false;
  host = lower(h);
  port = p.empty() ? "80" : std::string(p);
  return true;
}

struct ip_address {
  int family = 0;  // AF_INET or AF_INET6
  std::array<unsigned char, 16> bytes{};
};

std::optional<ip_address> parse_ip(std::string_view s) {
  if (s.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string z(s);
  ip_address a;
  for (int family : {AF_INET, AF_INET6})
    if (::inet_pton(family, z.c_str(), a.bytes.data()) == 1) {
      a.family = family;
      return a;
    }
  return std::nullopt;
}

// Whether `host` lies in NETWORK[/BITS] (no /BITS: the address itself).
bool in_block(const ip_address& host, std::string_view block) {
  const auto slash = block.find('/');
  const auto network = parse_ip(block.substr(0, slash));
  if (!network || network->family != host.family) return false;
  const unsigned total = host.family == AF_INET ? 32 : 128;
  unsigned bits = total;
  if (slash != std::string_view::npos) {
    const auto b = block.substr(slash + 1);
    if (b.empty() || b.size() > 3 || !std::all_of(b.begin(), b.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    bits = unsigned(std::stoi(std::string(b)));
    if (bits > total) return false;
  }
  const unsigned whole = bits / 8, rest = bits % 8;
  if (!std::equal(host.bytes.begin(), host.bytes.begin() + whole, network->bytes.begin())) return false;
  const auto mask = static_cast<unsigned char>(0xff << (8 - rest));
  return rest == 0 || ((host.bytes[whole] ^ network->bytes[whole]) & mask) == 0;
}

// One no_proxy entry: a name, address or block, and the port it is limited to.
struct no_proxy_entry {
  std::string name;
  std::string_view port;  // empty: any port
};

no_proxy_entry split_entry(std::string_view e) {
  if (e.front() == '[') {  // [V6], [V6]:PORT or [V6]/BITS
    const auto close = e.find(']');
    if (close == std::string_view::npos) return {std::string(e), {}};
    const auto rest = e.substr(close + 1);
    if (!rest.empty() && rest.front() == ':') return {std::string(e.substr(1, close - 1)), rest.substr(1)};
    return {std::string(e.substr(1, close - 1)) + std::string(rest), {}};
  }
  // One colon: NAME:PORT. More: a bare IPv6 address, no port.
  const auto colon = e.find(':');
  if (colon != std::string_view::npos && e.find(':', colon + 1) == std::string_view::npos)
    return {std::string(e.substr(0, colon)), e.substr(colon + 1)};
  return {std::string(e), {}};
}

// A host name `entry` exempts: itself and its subdomains. A leading "." or
// "*." and a trailing "." are ignored (curl's and Python's reading).
bool name_matches(std::string_view entry, std::string_view host) {
  if (entry.substr(0, 2) == "*.") entry.remove_prefix(2);
  else if (!entry.empty() && entry.front() == '.') entry.remove_prefix(1);
  if (!entry.empty() && entry.back() == '.') entry.remove_suffix(1);
  if (entry.empty() || entry.size() > host.size()) return false;
  const std::string e = lower(entry);
  if (host.substr(host.size() - e.size()) != e) return false;
  return e.size() == host.size() || host[host.size() - e.size() - 1] == '.';
}

bool entry_matches(std::string_view raw, std::string_view host, const std::optional<ip_address>& host_ip,
                   std::string_view port) {
  const auto entry = split_entry(raw);
  if (!entry.port.empty() && entry.port != port) return false;
  if (entry.name == "*") return true;
  if (host_ip) return in_block(*host_ip, entry.name);
  return name_matches(entry.name, host);
}

}  // namespace

std::string egress_proxy::name() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

std::optional<egress_proxy> parse_egress_proxy(std::string_view url, std::string& error) {
  const std::string shown = "'" + without_credentials(url) + "'";
  std::string_view rest = url;
  if (auto scheme_end = url.find("://"); scheme_end != std::string_view::npos) {
    if (lower(url.substr(0, scheme_end)) != "http")
      return error = shown + ": only http:// egress proxies are supported (the tunnel to the upstream is TLS)",
             std::nullopt;
    rest = url.substr(scheme_end + 3);
  }
  const auto authority_end = std::min(rest.find_first_of("/?#"), rest.size());
  std::string_view authority = rest.substr(0, authority_end);
  if (const auto tail = rest.substr(authority_end); !tail.empty() && tail != "/") {
    // An '@' after the cut: a password holding '/', '?' or '#' unencoded.
    if (tail.find('@') != std::string_view::npos)
      return error = shown + ": percent-encode '/', '?' and '#' in the user name and password (%2F, %3F, %23)",
             std::nullopt;
    return error = shown + ": a proxy URL has no path, query or fragment", std::nullopt;
  }

  egress_proxy via;
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const auto userinfo = authority.substr(0, at);
    const auto colon = userinfo.find(':');
    auto user = percent_decode(userinfo.substr(0, colon));
    auto password = percent_decode(colon == std::string_view::npos ? std::string_view() : userinfo.substr(colon + 1));
    if (!user || !password) return error = shown + ": bad percent-encoding in the credentials", std::nullopt;
    via.authorization = basic_authorization(*user, *password);
    authority.remove_prefix(at + 1);
  }
  if (!split_authority(authority, via.host, via.port))
    return error = shown + ": expected http://[user:password@]host[:port]", std::nullopt;
  return via;
}

bool no_proxy_matches(std::string_view no_proxy, std::string_view host, std::string_view port) {
  std::string h = lower(host);
  if (!h.empty() && h.back() == '.') h.pop_back();
  if (h.empty()) return false;
  const auto host_ip = parse_ip(h);
  constexpr std::string_view separators = ", \t";
  for (std::size_t at = 0; at < no_proxy.size();) {
    const auto start = no_proxy.find_first_not_of(separators, at);
    if (start == std::string_view::npos) break;
    const auto end = std::min(no_proxy.find_first_of(separators, start), no_proxy.size());
    if (entry_matches(no_proxy.substr(start, end - start), h, host_ip, port)) return true;
    at = end;
  }
  return false;
}

std::optional<egress_proxy> egress_route(const egress_settings& settings, bool tls, std::string_view host,
                                         std::string_view port, std::string& error) {
  std::string_view url = settings.flag, source = "--egress-proxy";
  if (url == "none") return std::nullopt;
  if (url.empty()) {
    url = tls ? settings.https_proxy : settings.http_proxy;
    source = tls ? "https_proxy / HTTPS_PROXY" : "http_proxy / HTTP_PROXY";
  }
  if (url.empty() || no_proxy_matches(settings.no_proxy, host, port)) return std::nullopt;
  auto via = parse_egress_proxy(url, error);
  if (!via) error = std::string(source) + ": " + error;
  return via;
}

std::string connect_request(const egress_proxy& via, std::string_view host, std::string_view port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  const std::string target = (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::string(port);
  std::string out = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n";
  if (!via.authorization.empty()) out += "Proxy-Authorization: " + via.authorization + "\r\n";
  return out + "\r\n";
}

std::optional<proxy_error> judge_connect_status(const egress_proxy& via, unsigned status) {
  if (status / 100 == 2) return std::nullopt;
  const std::string who = "egress proxy " + via.name();
  if (status == 407)
    return proxy_error{error_kind::upstream_unreachable,
                       who + " requires authentication (HTTP 407): " +
                           (via.authorization.empty() ? "give user:password in the proxy URL"
                                                      : "it refused the credentials in the proxy URL")};
  return proxy_error{error_kind::upstream_unreachable, who + " refused CONNECT (HTTP " + std::to_string(status) + ")"};
}

}  // namespace gistproxy::proxy
