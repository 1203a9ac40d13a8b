// Helpers the exchange's source files share (not part of its interface).
#pragma once

#include <boost/asio/ssl/error.hpp>
#include <chrono>

#include "proxy/exchange.hpp"
#include "rewrite/usage_observer.hpp"

namespace gistproxy::proxy::detail {

inline bool is_stale_connection_error(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::ssl::error::stream_truncated;
}

inline proxy_error upstream_failure(const error_code& ec, std::string_view while_doing) {
  std::string what(while_doing);
  if (ec == beast::error::timeout) return {error_kind::upstream_timeout, "upstream timed out " + what};
  if (is_stale_connection_error(ec) || ec == http::error::partial_message)
    return {error_kind::upstream_reset, "upstream closed the connection " + what};
  if (ec.category() == http::make_error_code(http::error::bad_version).category())
    return {error_kind::upstream_bad_response, "upstream sent malformed HTTP " + what + ": " + ec.message()};
  if (ec.category() == asio::error::get_ssl_category() || ec.category() == asio::ssl::error::get_stream_category())
    return {error_kind::upstream_tls, "TLS failure " + what + ": " + ec.message()};
  return {error_kind::upstream_reset, "upstream connection failed " + what + ": " + ec.message()};
}

// What a response body is (JSON, SSE or other), from its head.
inline rewrite::usage_observer::body_kind response_body_kind(const http::response_header<>& h) {
  auto ct = h.find(http::field::content_type);
  auto ce = h.find(http::field::content_encoding);
  return rewrite::usage_observer::classify(ct == h.end() ? "" : std::string_view(ct->value()),
                                           ce == h.end() ? "" : std::string_view(ce->value()));
}

// Runs one upstream operation and adds its duration to the request's upstream wait.
template <class Op>
auto timed(request_context& ctx, Op&& op) -> decltype(op()) {
  auto t0 = std::chrono::steady_clock::now();
  auto result = co_await op();
  ctx.upstream_wait += std::chrono::steady_clock::now() - t0;
  co_return result;
}


}  // namespace gistproxy::proxy::detail
