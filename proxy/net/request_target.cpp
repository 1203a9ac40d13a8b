#include "proxy/net/request_target.hpp"

#include <cctype>
#include <optional>
#include <string>

#include "rewrite/request_target.hpp"

namespace gistproxy::proxy {
namespace {

bool iequals_prefix(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

// A segment that is "." or ".." once %2e is read as a dot.
bool encoded_dot_segment(std::string_view segment) {
  if (segment.find('%') == std::string_view::npos) return false;
  std::string decoded;
  for (std::size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] == '%' && i + 2 < segment.size() + 1 && (segment.substr(i + 1, 2) == "2e" || segment.substr(i + 1, 2) == "2E")) {
      decoded += '.';
      i += 2;
    } else {
      decoded += segment[i];
    }
  }
  return decoded == "." || decoded == "..";
}

// A fragment is the client's own (RFC 9110 section 4.2.5): never sent, so
// never forwarded, logged or recorded either.
std::string_view without_fragment(std::string_view target) { return target.substr(0, target.find('#')); }

// An absolute-form target's path and query, after its scheme and authority
// (userinfo included), fragment kept; nullopt for any other form. The
// authority ends at the first '/', '?' or '#' (RFC 3986 section 3.2).
std::optional<std::string_view> after_authority(std::string_view target) {
  if (!iequals_prefix(target, "http://") && !iequals_prefix(target, "https://")) return std::nullopt;
  const auto authority = target.find("//") + 2;
  const auto rest = target.find_first_of("/?#", authority);
  return rest == std::string_view::npos ? std::string_view() : target.substr(rest);
}

}  // namespace

std::string target_shown(std::string_view target) {
  if (auto rest = after_authority(target)) target = *rest;
  else if (const auto at = target.rfind('@'); at != std::string_view::npos && !target.starts_with('/'))
    target.remove_prefix(at + 1);
  const auto shown = without_fragment(target);
  return shown.starts_with('/') ? std::string(shown) : "/" + std::string(shown);
}

checked_target check_request_target(std::string_view method, std::string_view target) {
  checked_target out;
  if (target == "*") {
    if (method == "OPTIONS") out.asterisk = true;
    else out.error = "the asterisk-form request target is only for OPTIONS (RFC 9112 section 3.2.4)";
    return out;
  }
  std::string from_absolute;
  if (auto rest = after_authority(target)) {
    from_absolute = rest->empty() || rest->front() != '/' ? "/" + std::string(*rest) : std::string(*rest);
    target = from_absolute;
  }
  target = without_fragment(target);
  if (target.empty() || target.front() != '/') {
    out.error = "the request target must be a path (origin-form) or an absolute URL";
    return out;
  }
  const auto query_at = target.find('?');
  const std::string_view path = target.substr(0, query_at);
  const std::string_view query = query_at == std::string_view::npos ? std::string_view{} : target.substr(query_at);
  for (std::size_t at = 1; at <= path.size();) {
    const auto end = std::min(path.find('/', at), path.size());
    if (encoded_dot_segment(path.substr(at, end - at))) {
      out.error = "the request target spells a dot segment in percent-encoding";
      return out;
    }
    at = end + 1;
  }
  // Every reader of a query (credentials, controls, SigV4) reads it through
  // rewrite::query_pairs, which stops at its bounds: past them a key could
  // hide from the router and reach a provider it does not belong to.
  if (!rewrite::query_pairs(query).complete()) {
    out.error = "the query string is longer than " + std::to_string(rewrite::query_pairs_view::max_query_bytes) +
                " bytes or has more than " + std::to_string(rewrite::query_pairs_view::max_query_pairs) + " parameters";
    return out;
  }
  // RFC 3986 section 5.2.4, in one pass over a view (no quadratic erasing);
  // ".." above the root is refused rather than clamped: no client of an LLM
  // API sends it, an attacker does.
  std::string_view in = path;
  std::string& result = out.origin_form;
  while (!in.empty()) {
    if (in.starts_with("../")) in.remove_prefix(3);
    else if (in.starts_with("./")) in.remove_prefix(2);
    else if (in.starts_with("/./")) in.remove_prefix(2);
    else if (in == "/.") in = "/";
    else if (in.starts_with("/../") || in == "/..") {
      in = in.size() == 3 ? std::string_view("/") : in.substr(3);
      if (result.empty()) {
        out.error = "the request target climbs above the root";
        result.clear();
        return out;
      }
      result.erase(result.rfind('/'));
    } else if (in == "." || in == "..") {
      in = {};
    } else {
      const auto next = in.find('/', 1);
      const auto segment = in.substr(0, next);
      result += segment;
      in.remove_prefix(segment.size());
    }
  }
  if (result.empty()) result = "/";
  result += query;
  return out;
}

std::optional<std::string> host_field_problem(unsigned version, std::size_t host_fields, std::string_view host) {
  if (host_fields > 1) return "more than one Host field";
  if (host_fields == 0) {
    if (version >= 11) return "an HTTP/1.1 request without a Host field";
    return std::nullopt;
  }
  for (unsigned char c : host) {
    const bool ok = std::isalnum(c) || std::string_view("-._~%!$&'()*+,;=:[]").find(char(c)) != std::string_view::npos;
    if (!ok) return "the Host field is not a valid host[:port]";
  }
  return std::nullopt;
}

}  // namespace gistproxy::proxy
