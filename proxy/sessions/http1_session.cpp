#include "proxy/sessions/http1_session.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <optional>

#include "proxy/net/buffered_parse.hpp"
#include "proxy/net/checked_parser.hpp"
#include "proxy/net/idle_wait.hpp"
#include "proxy/net/lingering_close.hpp"
#include "proxy/net/request_target.hpp"
#include "proxy/net/tls_stream.hpp"
#include "proxy/net/uninitialized_grow.hpp"
#include "proxy/sessions/http1_channel.hpp"
#include "proxy/sessions/request_dispatch.hpp"
#include "proxy/sessions/ws_session.hpp"

namespace gistproxy::proxy {
namespace {

constexpr std::size_t header_limit = 256 * 1024;
// Beast checks its header limit only when it needs more bytes, so a head
// can pass it by part of a read: Beast's is set this much higher and
// gistproxy's own, exact, is checked on the bytes the head took.
constexpr std::size_t header_limit_slack = 16 * 1024;
constexpr std::size_t large_body = 16 * 1024;
constexpr std::size_t large_read_buffer = 256 * 1024;
// A declared body gets this much address space before any of it arrives
// (more as it does): agent transcripts are megabytes and are then read with
// no copy. Pages are only resident once bytes land in them: a client that
// declares 64 MiB and sends nothing holds almost no memory.
constexpr std::size_t first_body_reservation = 8 * 1024 * 1024;

// Errors that just mean the client is gone or idle: close quietly. Over
// TLS a client that closes without close_notify (most do) is a truncation.
bool is_benign(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor || ec == asio::error::broken_pipe ||
         ec == asio::ssl::error::stream_truncated;
}

// The error answered when reading a request's headers or body fails.
proxy_error read_error(const error_code& ec, std::string_view part, std::uint64_t max_body) {
  if (ec == http::error::header_limit)
    return {error_kind::headers_too_large, "request " + std::string(part) + " over the limit of " +
                                               std::to_string(header_limit) + " bytes, or one field over " +
                                               std::to_string(max_field_bytes) + " bytes"};
  if (ec == http::error::body_limit)
    return {error_kind::body_too_large, "request body exceeds the limit of " + std::to_string(max_body) + " bytes"};
  if (ec == beast::error::timeout) return {error_kind::request_timeout, "request " + std::string(part) + " not received in time"};
  return {error_kind::bad_request, "malformed HTTP request " + std::string(part) + ": " + ec.message()};
}

// Reads exactly `length` body bytes (some may already be in `buffer`) into
// `body`, growing it geometrically as data arrives, never ahead of it by more
// than one read. The caller sets the deadline.
template <class Stream>
awaitable<error_code> read_declared_body(Stream& stream, beast::flat_buffer& buffer, std::string& body,
                                         std::uint64_t length) {
  const std::size_t have = std::min<std::size_t>(buffer.size(), length);
  body.reserve(std::min<std::uint64_t>(length, std::max(have, first_body_reservation)));
  body.resize(have);
  asio::buffer_copy(asio::buffer(body.data(), have), buffer.data());
  buffer.consume(have);
  while (body.size() < length) {
    const std::size_t want = std::min<std::uint64_t>(length - body.size(), large_read_buffer);
    if (body.capacity() - body.size() < want)  // grown by 4x: a 3 MB body is copied once, not four times
      body.reserve(std::min<std::uint64_t>(length, std::max(body.capacity() * 4, body.size() + want)));
    const std::size_t old = body.size();
    grow_uninitialized(body, want);  // the read overwrites them; what it did not fill is cut off below
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(body.data() + old, want), use_nothrow);
    body.resize(old + n);
    if (ec) co_return ec;
  }
  co_return error_code{};
}

// Every field checked against Beast's own storage limit (checked_parser.hpp).
using request_parser = checked_request_parser<http::string_body>;

// The fields the head's checks read, gathered in one pass over the head
// (each find() or count() is a lookup of its own). The first of each, as
// find() would return it: Beast keeps fields of one name in arrival order.
struct head_fields {
  std::optional<std::string_view> transfer_encoding, host, expect;
  std::size_t transfer_encodings = 0, hosts = 0;
  bool content_length = false;
};

head_fields head_fields_of(const http::request_header<>& h) {
  head_fields f;
  auto first = [](std::optional<std::string_view>& slot, const auto& field) {
    if (!slot) slot = std::string_view(field.value());
  };
  for (const auto& field : h) {
    switch (field.name()) {
      case http::field::transfer_encoding:
        first(f.transfer_encoding, field);
        ++f.transfer_encodings;
        break;
      case http::field::host:
        first(f.host, field);
        ++f.hosts;
        break;
      case http::field::expect: first(f.expect, field); break;
      case http::field::content_length: f.content_length = true; break;
      default: break;
    }
  }
  return f;
}

// RFC 9112 §6.3: a request whose Transfer-Encoding does not end in chunked
// has no reliable length (400), and Transfer-Encoding with Content-Length is
// refused rather than guessed at.
std::optional<proxy_error> unsupported_framing(const request_parser& parser, const head_fields& f) {
  if (!f.transfer_encoding) return std::nullopt;
  // Only plain chunked: another coding before it (gzip, chunked) would reach
  // the upstream still encoded but without the field that says so.
  std::string_view coding = *f.transfer_encoding;
  while (!coding.empty() && (coding.front() == ' ' || coding.front() == '\t')) coding.remove_prefix(1);
  while (!coding.empty() && (coding.back() == ' ' || coding.back() == '\t')) coding.remove_suffix(1);
  if (!parser.chunked() || !beast::iequals(coding, "chunked") || f.transfer_encodings > 1)
    return proxy_error{error_kind::bad_request, "Transfer-Encoding must be exactly chunked (RFC 9112 section 6.3)"};
  if (f.content_length)
    return proxy_error{error_kind::bad_request, "a request cannot have both Transfer-Encoding and Content-Length"};
  return std::nullopt;
}

// The request line and Host, checked before anything is forwarded; the
// target is rewritten to the origin-form path gistproxy forwards.
std::optional<proxy_error> unacceptable_target(request_parser& parser, const head_fields& f, bool& asterisk) {
  auto& h = parser.get();
  if (auto problem = host_field_problem(h.version(), f.hosts, f.host.value_or(std::string_view{})))
    return proxy_error{error_kind::bad_request, *problem + " (RFC 9112 section 3.2)"};
  auto checked = check_request_target(std::string_view(h.method_string()), std::string_view(h.target()));
  if (!checked.error.empty()) return proxy_error{error_kind::bad_request, checked.error};
  asterisk = checked.asterisk;
  if (!asterisk && checked.origin_form != std::string_view(h.target())) h.target(checked.origin_form);
  return std::nullopt;
}

// "OPTIONS *" asks about the server, not a resource: answered here, never
// forwarded as a path under the upstream's base.
constexpr std::string_view server_options =
    "HTTP/1.1 204 No Content\r\nAllow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n\r\n";

// What a request head asks of the connection before its body is read.
struct head_verdict {
  std::optional<proxy_error> refusal;  // answer this error and close
  std::string_view interim;            // bytes to send first (OPTIONS *'s answer, 100 Continue)
  bool answered = false;               // the interim bytes were the whole answer: read the next request
};

// The checks a request head must pass before its body is read. OPTIONS * and
// Expect: 100-continue are answered here. No I/O: the caller writes.
head_verdict screen_head(request_parser& parser) {
  head_verdict v;
  // A body whose length we cannot know for certain is refused: forwarding
  // it would let its bytes be read as the next request (smuggling).
  const auto fields = head_fields_of(parser.get());
  v.refusal = unsupported_framing(parser, fields);
  bool asterisk = false;
  if (!v.refusal) v.refusal = unacceptable_target(parser, fields, asterisk);
  if (v.refusal) return v;
  if (asterisk) {
    if (!parser.is_done()) v.refusal = proxy_error{error_kind::bad_request, "OPTIONS * takes no body"};
    v.interim = server_options;
    v.answered = true;
    return v;
  }
  if (fields.expect && beast::iequals(*fields.expect, "100-continue"))
    v.interim = "HTTP/1.1 100 Continue\r\n\r\n";
  return v;
}

// Answers a request refused before it was read whole and closes the
// connection, lingering so the client reads the answer instead of a reset.
awaitable<void> refuse(shard& sh, client_channel& channel, connection_memo& memo, request_parser& parser,
                       tcp_socket& socket, socket_deadline& deadline, std::optional<proxy_error> refusal) {
  co_await dispatch(sh, channel, memo, parser.get(), std::move(refusal));
  co_await lingering_close(socket, deadline);
}

}  // namespace

// What one request leaves the connection to do next.
enum class next_step { read_another, close };

// One request of an HTTP/1.x connection: its head (some bytes of it in
// `buffer` already), its body, its exchange. A coroutine of its own so that
// its state (the parser, the channel, the body), a couple of KiB, is only
// held while a request is being handled, not while the connection idles.
template <class Stream>
awaitable<next_step> serve_one_request(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& deadline,
                                       beast::flat_buffer& buffer, session_handle& handle, connection_memo& memo) {
  auto& svc = sh.svc();
  const auto& cfg = svc.cfg;
  request_parser parser;
  parser.body_limit(cfg.max_body_bytes);
  parser.header_limit(header_limit + header_limit_slack);
  if (buffer.capacity() < http1_read_buffer) buffer.reserve(http1_read_buffer);
  auto [header_ec, head_bytes] = co_await http::async_read_header(stream, buffer, parser, use_nothrow);
  const error_code ec = deadline.verdict(!header_ec && head_bytes > header_limit ? http::error::header_limit : header_ec);
  handle.busy = true;
  // This request's answer, framed for the version it was asked in.
  socket_channel<Stream> channel(stream, socket, deadline, cfg.client_timeout, parser.get(), svc.draining);
  if (ec) {
    if (is_benign(ec) || (ec == beast::error::timeout && buffer.size() == 0)) co_return next_step::close;
    std::optional<proxy_error> failure = read_error(ec, "headers", cfg.max_body_bytes);
    co_await refuse(sh, channel, memo, parser, socket, deadline, std::move(failure));
    co_return next_step::close;
  }
  auto head = screen_head(parser);
  if (head.refusal) {
    co_await refuse(sh, channel, memo, parser, socket, deadline, std::move(head.refusal));
    co_return next_step::close;
  }
  // A Responses WebSocket leaves the HTTP/1.1 loop for good (ws_session).
  if (auto route = socket_route(svc, parser.get())) {
    handle.busy = true;
    co_await serve_websocket(sh, stream, socket, deadline, handle, *route, parser.release());
    co_return next_step::close;
  }
  if (!head.interim.empty()) {
    auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(head.interim), use_nothrow);
    if (wec) co_return next_step::close;
    if (head.answered) co_return next_step::read_another;
  }
  std::optional<std::string> large_body_read;
  std::optional<http::request_header<>> header_as_received;
  if (auto length = parser.content_length(); length && *length > large_body && !parser.is_done()) {
    // A body of known length over `large_body` is read straight into its
    // final string, which grows only as bytes arrive: a client declaring
    // 64 MiB and sending nothing costs nothing.
    deadline.set(cfg.client_timeout);  // one deadline for the whole body
    const error_code read = co_await read_declared_body(stream, buffer, large_body_read.emplace(), *length);
    const error_code rec = deadline.verdict(read);
    if (rec == beast::error::timeout) {  // the client stalled mid-body
      // A named error, not a temporary in the co_await expression: GCC 12
      // destroys such temporaries twice (a double free, GCC bug 100611).
      std::optional<proxy_error> stalled = proxy_error{error_kind::request_timeout, "request body not received in time"};
      co_await dispatch(sh, channel, memo, parser.get(), std::move(stalled));
    }
    if (rec) co_return next_step::close;
  } else {
    // Chunked and small bodies go through Beast's parser. Beast adds a
    // chunked body's trailer fields to the header, each after any field of
    // the same name (a trailer Authorization lands beside the header's).
    // Trailers are not headers (RFC 9110 section 6.5.1): the header as
    // received is kept and put back.
    if (parser.chunked()) {
      buffer.reserve(large_read_buffer);  // Beast reads at most the spare capacity
      header_as_received = parser.get().base();
    }
    deadline.set(cfg.client_timeout);
    error_code body_ec = parse_buffered(parser, buffer);  // most bodies came with their head
    if (!body_ec && !parser.is_done()) {
      auto [read_ec, bn] = co_await http::async_read(stream, buffer, parser, use_nothrow);
      body_ec = read_ec;
    }
    if (const error_code bec = deadline.verdict(body_ec)) {
      if (is_benign(bec)) co_return next_step::close;
      std::optional<proxy_error> failure = read_error(bec, "body", cfg.max_body_bytes);
      co_await refuse(sh, channel, memo, parser, socket, deadline, std::move(failure));
      co_return next_step::close;
    }
  }
  // The request is in: the client owes nothing while the exchange runs
  // (each write to it arms its own deadline).
  deadline.disarm();
  auto request = parser.release();
  if (header_as_received) request.base() = std::move(*header_as_received);
  if (large_body_read) request.body() = std::move(*large_body_read);
  // An exchange can last minutes (a stream): an empty read buffer is not
  // kept across it, so an open stream holds no request-sized memory.
  if (buffer.size() == 0) buffer.shrink_to_fit();
  co_return co_await dispatch(sh, channel, memo, request, std::nullopt) ? next_step::read_another : next_step::close;
}

// The HTTP/1.x requests of one connection, read from `stream` (`buffer`
// holds its first bytes), one exchange each while the connection is kept.
template <class Stream>
awaitable<void> serve_http1(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& deadline,
                            beast::flat_buffer& buffer, session_handle& handle) {
  auto& svc = sh.svc();
  connection_memo memo;
  while (!svc.draining) {
    handle.busy = false;
    deadline.set(svc.cfg.idle_timeout);
    if (buffer.size() == 0) {
      // Idle until the client's next request: no read buffer is held meanwhile.
      buffer.shrink_to_fit();
      if constexpr (waits_before_reading<Stream>) {
        auto [ec] = co_await bytes_to_read(socket);
        if (ec) break;  // closed, idle too long, or draining
      }
    }
    if (co_await serve_one_request(sh, stream, socket, deadline, buffer, handle, memo) == next_step::close) break;
  }
}

template awaitable<void> serve_http1(shard&, tcp_socket&, tcp_socket&, socket_deadline&, beast::flat_buffer&,
                                     session_handle&);
template awaitable<void> serve_http1(shard&, tls_stream&, tcp_socket&, socket_deadline&, beast::flat_buffer&,
                                     session_handle&);

}  // namespace gistproxy::proxy
