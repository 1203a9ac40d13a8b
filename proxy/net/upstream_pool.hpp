// Keep-alive connections to one upstream, owned by one I/O thread (no locks).
// A connection is plain TCP or TLS (SNI, certificate and hostname verified),
// direct or through a CONNECT tunnel of an egress proxy (TLS still end to end
// with the upstream, verified against its name).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "proxy/net/beast.hpp"
#include "proxy/net/deadlines.hpp"
#include "proxy/net/egress_proxy.hpp"
#include "proxy/net/http_url.hpp"
#include "proxy/net/proxy_error.hpp"
#include "telemetry/metric_catalogue.hpp"

namespace gistproxy::proxy {

struct upstream_connection {
  // Beast reads at most the buffer's spare capacity per system call. Most
  // answers (a chat completion, a stream's events) fit a small buffer; one
  // with a large body gets a large one for its read (wants_large_reads),
  // which goes back to small when the connection returns to the pool: 256
  // pooled connections hold 2 MiB, not 16.
  static constexpr std::size_t small_read_buffer = 8 * 1024;
  static constexpr std::size_t large_read_buffer = 64 * 1024;

  upstream_connection(executor ex, deadline_sweeper& sweeper, asio::ssl::context* tls_context);
  std::optional<tcp_socket> plain;
  std::optional<beast::ssl_stream<tcp_socket>> tls;
  beast::flat_buffer buffer;  // bytes read past the last response (normally none)
  bool reused = false;
  coarse_clock::time_point idle_since;
  socket_deadline deadline;  // after the sockets: it refers to one

  tcp_socket& tcp() { return tls ? tls->next_layer() : *plain; }
  // Calls f with the stream to use (plain or TLS); both branches return the same type.
  template <class F>
  auto with_stream(F&& f) {
    return tls ? f(*tls) : f(*plain);
  }
  enum class idle_state { usable, closed, unasked_bytes };
  // usable: nothing is left of the last answer (no bytes read past its end)
  // and the peer has neither closed the idle connection nor sent anything
  // since (one non-blocking peek).
  idle_state state_when_idle();
  bool looks_alive() { return state_when_idle() == idle_state::usable; }
  // Before reading a body of `remaining` more bytes (nullopt: unknown, such
  // as chunked): a large buffer when it will not fit the small one.
  void wants_large_reads(std::optional<std::uint64_t> remaining) {
    if (buffer.capacity() < large_read_buffer && (!remaining || *remaining > small_read_buffer))
      buffer.reserve(large_read_buffer);
  }
  // Back to the small buffer (an idle connection's buffer holds nothing).
  void shrink_read_buffer() {
    if (buffer.capacity() <= small_read_buffer || buffer.size() != 0) return;
    buffer.shrink_to_fit();
    buffer.reserve(small_read_buffer);
  }
};

class h2_upstream_connection;

struct upstream_timeouts {
  std::chrono::milliseconds connect;
  unsigned max_idle;
};

class upstream_pool {
 public:
  // `via`: the egress proxy to tunnel through, or nullopt to connect directly.
  upstream_pool(executor ex, deadline_sweeper& sweeper, http_url target, asio::ssl::context* tls,
                upstream_timeouts timeouts, telemetry::metric_catalogue& metrics,
                std::optional<egress_proxy> via = std::nullopt);
  ~upstream_pool();

  struct lease {
    std::unique_ptr<upstream_connection> connection;
    std::optional<proxy_error> error;
  };
  // An idle keep-alive connection, or a new one when none is left (or fresh_only).
  awaitable<lease> acquire(bool fresh_only = false);
  // Returns a connection whose last response ended cleanly and may be reused.
  // One with anything left after that response (bytes read past its end, or
  // waiting on the socket) is closed instead and counted as discarded: those
  // bytes would be the next request's answer, maybe another client's.
  void release(std::unique_ptr<upstream_connection> c);
  // Counts a connection closed instead of reused because its answer's framing
  // could not show where it ended (the caller drops it).
  void discard(std::string_view why);
  // A fresh connection for HTTP/2 (never pooled with the HTTP/1.1 ones):
  // over TLS it offers ALPN "h2" only, and an upstream that chooses no h2 is
  // an upstream_no_h2 error (a request that must go over HTTP/2 never falls
  // back to HTTP/1.1); over plain TCP the caller speaks h2c with prior knowledge.
  awaitable<lease> connect_h2() { return connect(true); }
  // An idle HTTP/2 connection whose last stream ended cleanly (one stream at
  // a time: no multiplexing yet), or null when none is fit: the caller then
  // connects with connect_h2. One with bytes waiting (a GOAWAY, a PING), or
  // closed, or idle too long, is closed instead.
  std::unique_ptr<h2_upstream_connection> idle_h2();
  void release_h2(std::unique_ptr<h2_upstream_connection> c);
  const http_url& target() const { return target_; }
  const std::optional<egress_proxy>& via() const { return via_; }
  void close_idle();

 private:
  awaitable<lease> connect(bool h2 = false);
  awaitable<std::optional<proxy_error>> secure(upstream_connection& c, bool h2);

  executor executor_;
  deadline_sweeper& sweeper_;
  http_url target_;
  asio::ssl::context* tls_;
  upstream_timeouts timeouts_;
  telemetry::metric_catalogue& metrics_;
  std::optional<egress_proxy> via_;
  std::vector<std::unique_ptr<upstream_connection>> idle_;
  std::vector<std::unique_ptr<h2_upstream_connection>> idle_h2_;
  std::optional<tcp::resolver::results_type> resolved_;
  std::chrono::steady_clock::time_point resolved_at_;
};

// The client TLS context: system trust store plus an optional extra CA file.
// Throws std::runtime_error with a clear message if the CA file is unusable.
std::unique_ptr<asio::ssl::context> make_upstream_tls_context(const std::string& extra_ca_file);

}  // namespace gistproxy::proxy
