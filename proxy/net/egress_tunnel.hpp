// The CONNECT exchange with an egress proxy, on a stream already connected to
// it. A template on the stream because its two callers differ: the upstream
// pool's sockets run on a shard's io_context executor, the S3 client's Beast
// streams on a type-erased one. The request and the verdict on the answer
// are egress_proxy.hpp's pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proxy/net/beast.hpp"
#include "proxy/net/checked_parser.hpp"
#include "proxy/net/egress_proxy.hpp"
#include "proxy/net/proxy_error.hpp"

namespace gistproxy::proxy {

// A proxy's answer to CONNECT is a status line and a few fields: a head past
// this is not one, and is not read further.
constexpr std::size_t connect_answer_limit = 16 * 1024;

// What a failed CONNECT exchange (not a refusal: the I/O itself) tells the
// client. Names the proxy, never its credentials.
inline proxy_error tunnel_failure(const egress_proxy& via, const error_code& ec) {
  const std::string who = "egress proxy " + via.name();
  if (ec == beast::error::timeout) return {error_kind::upstream_timeout, who + " did not answer CONNECT in time"};
  if (ec == http::error::header_limit)
    return {error_kind::upstream_bad_response, who + " sent a CONNECT answer head over 16 KiB"};
  if (ec.category() == http::make_error_code(http::error::bad_version).category() && ec != http::error::end_of_stream &&
      ec != http::error::partial_message)
    return {error_kind::upstream_bad_response, who + " sent malformed HTTP answering CONNECT: " + ec.message()};
  return {error_kind::upstream_unreachable, who + " closed or failed the connection during CONNECT: " + ec.message()};
}

// The error as the caller reports it; the upstream pool passes its socket
// deadline's verdict, which turns an operation its deadline cut into a timeout.
struct same_error {
  error_code operator()(const error_code& ec) const { return ec; }
};

// Asks the proxy `stream` is connected to for a tunnel to host:port, and reads
// its answer head into `buffer` (at most connect_answer_limit bytes). Nothing
// once the tunnel is open (the stream then reaches host:port: TLS, if any,
// starts now, verified against host), else why not. The caller's deadline
// (its connect timeout, armed before it connected) bounds the exchange. The
// arguments must outlive the call (it is awaited at once).
template <class Stream, class Verdict = same_error>
asio::awaitable<std::optional<proxy_error>, typename Stream::executor_type> connect_through(
    Stream& stream, beast::flat_buffer& buffer, const egress_proxy& via, std::string_view host, std::string_view port,
    Verdict verdict = {}) {
  constexpr auto nothrow = asio::as_tuple(asio::use_awaitable_t<typename Stream::executor_type>{});
  const std::string request = connect_request(via, host, port);
  auto [wec, written] = co_await asio::async_write(stream, asio::buffer(request), nothrow);
  if (const auto ec = verdict(wec)) co_return tunnel_failure(via, ec);
  checked_response_parser<http::empty_body> answer;
  answer.header_limit(std::uint32_t(connect_answer_limit));
  auto [rec, read] = co_await http::async_read_header(stream, buffer, answer, nothrow);
  if (const auto ec = verdict(rec)) co_return tunnel_failure(via, ec);
  if (auto refused = judge_connect_status(via, answer.get().result_int())) co_return refused;
  // Neither TLS nor HTTP/1.1 lets the upstream speak first: bytes already
  // here are the proxy's, and would be misread as the upstream's.
  if (buffer.size() != 0)
    co_return proxy_error{error_kind::upstream_bad_response,
                          "egress proxy " + via.name() + " sent bytes after its CONNECT answer"};
  co_return std::nullopt;
}

}  // namespace gistproxy::proxy
