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

// Copies every end-to-end header of `from` into `to`, in order.
template <class From, class To>
void copy_end_to_end_fields(const From& from, To& to) {
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
    to.insert(f.name_string(), f.value());
  }
}

}  // namespace gistproxy::proxy
