#include "proxy/client_session.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <optional>

#include "proxy/exchange.hpp"

namespace gistproxy::proxy {
namespace {

constexpr std::size_t header_limit = 256 * 1024;
constexpr std::size_t large_body = 16 * 1024;
constexpr std::size_t large_read_buffer = 256 * 1024;

// Errors that just mean the client is gone or idle: close quietly.
bool is_benign(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor || ec == asio::error::broken_pipe;
}

// The error answered when reading a request's headers or body fails.
proxy_error read_error(const error_code& ec, std::string_view part, std::uint64_t max_body) {
  if (ec == http::error::body_limit)
    return {error_kind::body_too_large, "request body exceeds the limit of " + std::to_string(max_body) + " bytes"};
  if (ec == beast::error::timeout) return {error_kind::request_timeout, "request " + std::string(part) + " not received in time"};
  return {error_kind::bad_request, "malformed HTTP request " + std::string(part) + ": " + ec.message()};
}

// After an error response, stop sending and drain what the client still sends
// for a moment, so it reads our response instead of a reset.
awaitable<void> lingering_close(beast::tcp_stream& stream) {
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  char sink[16384];
  std::size_t drained = 0;
  stream.expires_after(std::chrono::seconds(2));
  while (drained < (64u << 20)) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(sink), use_nothrow);
    if (ec) break;
    drained += n;
  }
  stream.socket().close(ignored);
}

struct session_registration {
  shard& owner;
  std::list<session_handle>::iterator handle;
  session_registration(shard& s, tcp::socket* socket) : owner(s) {
    handle = s.sessions().insert(s.sessions().end(), session_handle{socket, false});
    s.svc().metrics.active_connections.get().add(1);
    s.svc().live_connections.fetch_add(1);
  }
  ~session_registration() {
    if (!owner.stopping()) owner.sessions().erase(handle);
    owner.svc().metrics.active_connections.get().add(-1);
    owner.svc().live_connections.fetch_sub(1);
  }
};

}  // namespace

awaitable<void> serve_client(shard& sh, tcp::socket socket) {
  auto& svc = sh.svc();
  const auto& cfg = svc.cfg;
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  session_registration registration(sh, &stream.socket());
  auto& handle = *registration.handle;

  while (!svc.draining) {
    handle.busy = false;
    http::request_parser<http::string_body> parser;
    parser.body_limit(cfg.max_body_bytes);
    parser.header_limit(header_limit);
    stream.expires_after(cfg.idle_timeout);
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_nothrow);
    handle.busy = true;
    exchange ex(sh, stream);
    if (ec) {
      if (is_benign(ec) || (ec == beast::error::timeout && buffer.size() == 0)) break;
      co_await ex.reject(parser.get(), read_error(ec, "headers", cfg.max_body_bytes));
      co_await lingering_close(stream);
      co_return;
    }
    if (auto it = parser.get().find(http::field::expect);
        it != parser.get().end() && beast::iequals(it->value(), "100-continue")) {
      static constexpr std::string_view cont = "HTTP/1.1 100 Continue\r\n\r\n";
      auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(cont), use_nothrow);
      if (wec) break;
    }
    // A body of known length is read straight into its final string: no
    // intermediate buffer, one copy by the kernel, reads as large as the rest.
    // Chunked bodies go through Beast's parser.
    std::optional<std::string> direct_body;
    if (auto length = parser.content_length(); length && *length > large_body && !parser.is_done()) {
      direct_body.emplace();
      direct_body->resize(*length);
      std::size_t have = std::min<std::size_t>(buffer.size(), *length);
      asio::buffer_copy(asio::buffer(direct_body->data(), have), buffer.data());
      buffer.consume(have);
      stream.expires_after(cfg.client_timeout);
      auto [rec, rn] = co_await asio::async_read(stream, asio::buffer(direct_body->data() + have, *length - have),
                                                 use_nothrow);
      if (rec) {  // the client went away or stalled mid-body
        if (rec == beast::error::timeout)
          co_await ex.reject(parser.get(), {error_kind::request_timeout, "request body not received in time"});
        break;
      }
    } else {
      if (parser.chunked()) buffer.reserve(large_read_buffer);  // Beast reads at most the spare capacity
      stream.expires_after(cfg.client_timeout);
      auto [bec, bn] = co_await http::async_read(stream, buffer, parser, use_nothrow);
      if (bec) {
        if (is_benign(bec)) break;
        co_await ex.reject(parser.get(), read_error(bec, "body", cfg.max_body_bytes));
        co_await lingering_close(stream);
        co_return;
      }
    }
    auto request = parser.release();
    if (direct_body) request.body() = std::move(*direct_body);
    if (!co_await ex.run(request)) break;
    if (buffer.capacity() > large_read_buffer && buffer.size() == 0) buffer.shrink_to_fit();
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.socket().close(ignored);
}

}  // namespace gistproxy::proxy
