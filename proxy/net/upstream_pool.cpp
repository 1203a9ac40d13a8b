#include "proxy/net/upstream_pool.hpp"

#include <sys/socket.h>

#include <boost/asio/ssl/host_name_verification.hpp>
#include <stdexcept>

#include "proxy/net/descriptor_reserve.hpp"
#include "proxy/net/egress_tunnel.hpp"
#include "proxy/net/h2_upstream_connection.hpp"

namespace gistproxy::proxy {
namespace {

constexpr auto resolve_cache_ttl = std::chrono::seconds(30);
constexpr auto max_idle_age = std::chrono::seconds(50);  // below common upstream keep-alive limits

// Each address in turn, as asio::async_connect does, except that a socket
// that cannot be opened says why: Asio's range connect reports a failed
// socket() (EMFILE: out of descriptors) as "Operation canceled".
awaitable<error_code> connect_any(tcp_socket& socket, const tcp::resolver::results_type& addresses,
                                  const socket_deadline& deadline) {
  error_code ec = asio::error::host_not_found;
  for (const auto& address : addresses) {
    error_code ignored;
    socket.close(ignored);
    socket.open(address.endpoint().protocol(), ec);
    if (is_out_of_descriptors(ec)) break;  // so would every other address
    if (ec) continue;
    auto [connect_ec] = co_await socket.async_connect(address.endpoint(), use_nothrow);
    ec = connect_ec;
    if (!ec || deadline.expired()) break;
  }
  co_return ec;
}

bool selected_h2(beast::ssl_stream<tcp_socket>& tls) {
  const unsigned char* chosen = nullptr;
  unsigned length = 0;
  SSL_get0_alpn_selected(tls.native_handle(), &chosen, &length);
  return std::string_view(reinterpret_cast<const char*>(chosen), length) == "h2";
}

}  // namespace

upstream_connection::upstream_connection(executor ex, deadline_sweeper& sweeper, asio::ssl::context* tls_context)
    : plain(tls_context ? std::nullopt : std::optional<tcp_socket>(std::in_place, ex)),
      tls(tls_context ? std::optional<beast::ssl_stream<tcp_socket>>(std::in_place, ex, *tls_context) : std::nullopt),
      deadline(sweeper, tls ? tls->next_layer() : *plain) {}

upstream_connection::idle_state upstream_connection::state_when_idle() {
  if (buffer.size() != 0) return idle_state::unasked_bytes;  // bytes past the last answer's end
  auto& sock = tcp();
  if (!sock.is_open()) return idle_state::closed;
  char byte;
  ssize_t n = ::recv(sock.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  // -1/EAGAIN: nothing pending, the usual healthy state. 0: the peer closed.
  // >0: unexpected bytes (e.g. a TLS close_notify) make the connection unusable.
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return idle_state::usable;
  return n > 0 ? idle_state::unasked_bytes : idle_state::closed;
}

upstream_pool::upstream_pool(executor ex, deadline_sweeper& sweeper, http_url target, asio::ssl::context* tls,
                             upstream_timeouts timeouts, telemetry::metric_catalogue& metrics,
                             std::optional<egress_proxy> via)
    : executor_(std::move(ex)),
      sweeper_(sweeper),
      target_(std::move(target)),
      tls_(tls),
      timeouts_(timeouts),
      metrics_(metrics),
      via_(std::move(via)) {}

upstream_pool::~upstream_pool() = default;

void upstream_pool::close_idle() {
  idle_.clear();
  idle_h2_.clear();
}

std::unique_ptr<h2_upstream_connection> upstream_pool::idle_h2() {
  const auto now = coarse_clock::now();
  while (!idle_h2_.empty()) {
    auto c = std::move(idle_h2_.back());
    idle_h2_.pop_back();
    if (now - c->socket().idle_since < max_idle_age && c->socket().looks_alive()) {
      c->socket().reused = true;
      metrics_.upstream_connections.labels({"reused"}).inc();
      return c;
    }
    discard("leftover");
  }
  return nullptr;
}

void upstream_pool::release_h2(std::unique_ptr<h2_upstream_connection> c) {
  if (!c->socket().looks_alive()) return discard("leftover");
  if (idle_h2_.size() >= timeouts_.max_idle) return;  // closes it
  c->socket().idle_since = coarse_clock::now();
  c->socket().deadline.disarm();
  idle_h2_.push_back(std::move(c));
}

awaitable<upstream_pool::lease> upstream_pool::acquire(bool fresh_only) {
  auto now = coarse_clock::now();
  while (!fresh_only && !idle_.empty()) {
    auto c = std::move(idle_.back());  // LIFO: the warmest connection first
    idle_.pop_back();
    if (now - c->idle_since >= max_idle_age) continue;
    const auto state = c->state_when_idle();
    if (state == upstream_connection::idle_state::usable) {
      c->reused = true;
      metrics_.upstream_connections.labels({"reused"}).inc();
      co_return lease{std::move(c), std::nullopt};
    }
    // Bytes that came after the last answer was read (release() saw none).
    if (state == upstream_connection::idle_state::unasked_bytes) discard("leftover");
  }
  co_return co_await connect();
}

void upstream_pool::release(std::unique_ptr<upstream_connection> c) {
  // Bytes already read past the answer's end disqualify it now; bytes still
  // in the kernel are found by acquire()'s look before any reuse (a look
  // here too would cost a system call per request and prove nothing more).
  if (c->buffer.size() != 0 || !c->tcp().is_open()) return discard("leftover");
  if (idle_.size() >= timeouts_.max_idle) return;  // closes it
  c->shrink_read_buffer();
  c->idle_since = coarse_clock::now();
  c->deadline.disarm();
  idle_.push_back(std::move(c));
}

void upstream_pool::discard(std::string_view why) { metrics_.upstream_connections_discarded.labels({why}).inc(); }

awaitable<upstream_pool::lease> upstream_pool::connect(bool h2) {
  // Through an egress proxy, the proxy is the address to dial.
  const std::string& host = via_ ? via_->host : target_.host;
  const std::string& port = via_ ? via_->port : target_.port;
  auto now = std::chrono::steady_clock::now();
  if (!resolved_ || now - resolved_at_ > resolve_cache_ttl) {
    tcp::resolver resolver(executor_);
    auto [ec, results] = co_await resolver.async_resolve(host, port, use_nothrow);
    if (is_out_of_descriptors(ec))  // a name lookup opens a socket and files too
      co_return lease{nullptr, proxy_error{error_kind::out_of_descriptors,
                                           "out of file descriptors: cannot resolve " + host}};
    if (ec)
      co_return lease{nullptr, proxy_error{error_kind::upstream_unreachable,
                                           "cannot resolve " + std::string(via_ ? "egress proxy" : "upstream") +
                                               " host " + host + ": " + ec.message()}};
    resolved_ = results;
    resolved_at_ = now;
  }

  auto c = std::make_unique<upstream_connection>(executor_, sweeper_, tls_);
  c->buffer.reserve(upstream_connection::small_read_buffer);
  auto& socket = c->tcp();
  // One deadline for connecting, the CONNECT exchange and the TLS handshake.
  auto connecting = c->deadline.arm(timeouts_.connect);
  const error_code ec = c->deadline.verdict(co_await connect_any(socket, *resolved_, c->deadline));
  if (ec) {
    const std::string dialled = via_ ? "egress proxy " + via_->name() + " for upstream " + target_.host_header()
                                     : "upstream " + target_.host_header();
    if (is_out_of_descriptors(ec))  // the upstream was never tried: keep its addresses
      co_return lease{nullptr, proxy_error{error_kind::out_of_descriptors,
                                           "out of file descriptors: cannot open a connection to " + dialled}};
    resolved_.reset();  // re-resolve next time: the address may have moved
    auto kind = ec == beast::error::timeout ? error_kind::upstream_timeout : error_kind::upstream_unreachable;
    co_return lease{nullptr, proxy_error{kind, "cannot connect to " + dialled + ": " +
                                                   (ec == beast::error::timeout ? "timed out" : ec.message())}};
  }
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  if (via_) {
    auto refused = co_await connect_through(socket, c->buffer, *via_, target_.host, target_.port,
                                            [&d = c->deadline](const error_code& e) { return d.verdict(e); });
    if (refused) {
      refused->detail = "cannot reach upstream " + target_.host_header() + ": " + refused->detail;
      co_return lease{nullptr, std::move(refused)};
    }
  }
  if (c->tls)
    if (auto failed = co_await secure(*c, h2)) co_return lease{nullptr, std::move(failed)};
  metrics_.upstream_connections.labels({"new"}).inc();
  co_return lease{std::move(c), std::nullopt};
}

// TLS with the upstream itself (through a tunnel too): SNI, then verify the
// chain and that the certificate names the upstream's host.
awaitable<std::optional<proxy_error>> upstream_pool::secure(upstream_connection& c, bool h2) {
  if (!SSL_set_tlsext_host_name(c.tls->native_handle(), target_.host.c_str()))
    co_return proxy_error{error_kind::upstream_tls, "cannot set TLS SNI for " + target_.host};
  static constexpr unsigned char alpn_h2[] = {2, 'h', '2'};
  if (h2 && SSL_set_alpn_protos(c.tls->native_handle(), alpn_h2, sizeof alpn_h2) != 0)
    co_return proxy_error{error_kind::upstream_tls, "cannot offer ALPN h2 to " + target_.host};
  c.tls->set_verify_mode(asio::ssl::verify_peer);
  c.tls->set_verify_callback(asio::ssl::host_name_verification(target_.host));
  auto [handshake_ec] = co_await c.tls->async_handshake(asio::ssl::stream_base::client, use_nothrow);
  const error_code hec = c.deadline.verdict(handshake_ec);
  if (!hec && h2 && !selected_h2(*c.tls)) co_return proxy_error{error_kind::upstream_no_h2,
        "upstream " + target_.host_header() + " did not choose HTTP/2 (ALPN h2); this request is signed over "
        "HTTP/2 pseudo-headers and cannot verify over HTTP/1.1, so it was not sent"};
  if (!hec) co_return std::nullopt;
  auto kind = hec == beast::error::timeout ? error_kind::upstream_timeout : error_kind::upstream_tls;
  co_return proxy_error{kind, "TLS handshake with upstream " + target_.host_header() + " failed: " + hec.message()};
}

std::unique_ptr<asio::ssl::context> make_upstream_tls_context(const std::string& extra_ca_file) {
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  error_code ec;
  ctx->set_default_verify_paths(ec);
  if (ec) throw std::runtime_error("cannot load the system CA store: " + ec.message());
  if (!extra_ca_file.empty()) {
    ctx->load_verify_file(extra_ca_file, ec);
    if (ec) throw std::runtime_error("cannot load --upstream-ca '" + extra_ca_file + "': " + ec.message());
  }
  ctx->set_verify_mode(asio::ssl::verify_peer);
  return ctx;
}

}  // namespace gistproxy::proxy
