#include "proxy/sessions/client_connection.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <optional>

#include "proxy/net/idle_wait.hpp"
#include "proxy/net/tls_stream.hpp"
#include "proxy/sessions/h2_session.hpp"
#include "proxy/sessions/http1_session.hpp"
#include "proxy/sessions/session_guard.hpp"

namespace gistproxy::proxy {
namespace {

// The HTTP/2 connection preface (RFC 9113 §3.4): a client with prior
// knowledge of HTTP/2 (h2c) starts with it; no HTTP/1.1 request can.
constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Reads the connection's first bytes into `buffer` until they are the
// HTTP/2 preface or cannot be; they stay there for whichever protocol reads
// them (Beast parses what the buffer holds before reading: no copy, and no
// extra read for an HTTP/1.1 request). Nullopt: the client left or idled.
template <class Stream>
awaitable<std::optional<bool>> starts_with_h2_preface(Stream& stream, tcp_socket& socket, beast::flat_buffer& buffer,
                                                      socket_deadline& deadline) {
  for (;;) {
    const std::string_view have(static_cast<const char*>(buffer.data().data()), buffer.size());
    const std::size_t n = std::min(have.size(), h2_preface.size());
    if (have.substr(0, n) != h2_preface.substr(0, n)) co_return false;
    if (n == h2_preface.size()) co_return true;
    if constexpr (waits_before_reading<Stream>) {
      if (buffer.size() == 0) {
        auto [ec] = co_await bytes_to_read(socket);
        if (ec) co_return std::nullopt;
      }
    }
    auto [ec, got] = co_await stream.async_read_some(buffer.prepare(http1_read_buffer), use_nothrow);
    if (deadline.verdict(ec)) co_return std::nullopt;
    buffer.commit(got);
  }
}

// How a TLS handshake ended, for gistproxy_tls_handshakes_total.
const char* handshake_result(const error_code& ec) {
  if (!ec) return "ok";
  if (ec == beast::error::timeout) return "timeout";
  if (ec.category() == asio::error::get_ssl_category()) {
    const auto reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
    if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE || reason == SSL_R_CERTIFICATE_VERIFY_FAILED)
      return "client_certificate";
  }
  return "failed";
}

struct session_registration {
  shard& owner;
  std::list<session_handle>::iterator handle;
  session_registration(shard& s, tcp_socket* socket) : owner(s) {
    handle = s.sessions().insert(s.sessions().end(), session_handle{socket, false});
    s.svc().metrics.active_connections.get().add(1);
    // live_connections was counted by the accept loop, before this session
    // ran: the connection limit must see a connection the moment it exists.
  }
  ~session_registration() {
    if (!owner.stopping()) owner.sessions().erase(handle);
    owner.svc().metrics.active_connections.get().add(-1);
    owner.svc().live_connections.fetch_sub(1);
  }
};

// The TLS handshake, bounded by --client-timeout and counted by result.
awaitable<bool> handshake(shard& sh, tls_stream& stream, socket_deadline& deadline) {
  deadline.set(sh.svc().cfg.client_timeout);
  auto [handshake_ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, use_nothrow);
  const error_code ec = deadline.verdict(handshake_ec);
  deadline.disarm();
  sh.svc().metrics.tls_handshakes.labels({handshake_result(ec)}).inc();
  co_return !ec;
}

// A connection's first bytes decide its protocol: the HTTP/2 preface hands
// it to an HTTP/2 session (h2c, or h2 over TLS), anything else is HTTP/1.x.
template <class Stream>
awaitable<void> serve_connection(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& deadline,
                                 session_handle& handle) {
  beast::flat_buffer buffer;  // allocated by the first read, once the client has sent something
  deadline.set(sh.svc().cfg.idle_timeout);
  const auto h2 = co_await starts_with_h2_preface(stream, socket, buffer, deadline);
  if (!h2) co_return;
  // The session guard: whatever escapes ends this connection only (the
  // caller closes it), counted and logged. (An HTTP/2 session never lets
  // one out while its streams still use the socket: h2_session.cpp.)
  try {
    if (*h2) co_await serve_h2(sh, stream, socket, deadline, buffer, handle);
    else co_await serve_http1(sh, stream, socket, deadline, buffer, handle);
  } catch (...) {
    count_session_failure(sh.svc(), *h2 ? "h2" : "http1", "session", std::current_exception());
  }
}

}  // namespace

awaitable<void> serve_client(shard& sh, tcp_socket socket) {
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  socket_deadline deadline(sh.deadlines(), socket);
  session_registration registration(sh, &socket);
  co_await serve_connection(sh, socket, socket, deadline, *registration.handle);
  socket.shutdown(tcp_socket::shutdown_send, ignored);
  socket.close(ignored);
}

awaitable<void> serve_tls_client(shard& sh, tcp_socket accepted, std::shared_ptr<asio::ssl::context> tls) {
  tls_stream stream(std::move(accepted), *tls);
  auto& socket = stream.next_layer();
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  socket_deadline deadline(sh.deadlines(), socket);
  session_registration registration(sh, &socket);
  if (co_await handshake(sh, stream, deadline)) {
    co_await serve_connection(sh, stream, socket, deadline, *registration.handle);
    // close_notify, so the client can tell our end from a truncation; a
    // client that does not answer it is not waited for long.
    auto bounded = deadline.arm(std::chrono::seconds(2));
    co_await stream.async_shutdown(use_nothrow);
  }
  socket.close(ignored);
}

}  // namespace gistproxy::proxy
