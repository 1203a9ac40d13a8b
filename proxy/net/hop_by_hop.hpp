// Which headers a proxy must not forward (RFC 9110 §7.6.1): connection-specific
// ones, plus any the Connection header names. Host, Content-Length and
// Transfer-Encoding are set by the proxy for its own hop.
#pragma once

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <string_view>

namespace gistproxy::proxy {

inline bool is_hop_by_hop(boost::beast::http::field f) {
  using boost::beast::http::field;
  switch (f) {
    case field::connection:
    case field::keep_alive:
    case field::proxy_connection:
    case field::proxy_authenticate:
    case field::proxy_authorization:
    case field::te:
    case field::trailer:
    case field::transfer_encoding:
    case field::upgrade:
    case field::host:
    case field::content_length:
    case field::expect:  // the proxy already holds the whole body
      return true;
    default:
      return false;
  }
}

// Calls `visit` with every end-to-end field of `from`, in order: neither
// hop-by-hop nor named by its Connection field.
template <class Fields, class Visit>
void for_each_end_to_end_field(const Fields& from, Visit&& visit) {
  namespace http = boost::beast::http;
  auto connection = from.find(http::field::connection);
  std::string_view listed = connection == from.end() ? std::string_view() : std::string_view(connection->value());
  for (const auto& f : from) {
    if (is_hop_by_hop(f.name())) continue;
    if (!listed.empty()) {
      bool named = false;
      for (auto token : http::token_list(listed))
        if (boost::beast::iequals(token, f.name_string())) named = true;
      if (named) continue;
    }
    visit(f);
  }
}

}  // namespace gistproxy::proxy
