// The whole server in one process: each input is one client connection to
// the real session code (serve_client / serve_tls_client: the preface sniff,
// HTTP/1.1, HTTP/2 through nghttp2, TLS) over loopback, on the services
// `gistproxy serve` builds (process_services), before an in-process upstream.
//
// The input: a mode byte (cleartext, HTTP inside a real TLS session, raw
// bytes to the TLS listener: TLS records), then ops — literal bytes, a byte
// repeated (oversized fields cost a few input bytes), a pause that lets the
// server run (resets land at every point), an abortive close, a half close.
// Seeds (tests/fuzz/corpus/server_fuzz, made by tests/fuzz/server_seeds.py)
// cover each class of round 4: a field over 64 KiB on HTTP/1.1 and h2,
// cookie crumbs, WINDOW_UPDATE overflows, resets in the HEADERS read, rapid
// reset, streams past the limit.
//
// Beyond the sanitizers, each input must leave: no failure caught by the
// session guard (gistproxy_session_failures_total stays 0: an exception
// escaped some connection's code), at most 100 upstream requests in flight
// from the one connection, and the session ended within 6 s of the input's
// start, leaving nothing waiting upstream 2 s later.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <filesystem>

#include "proxy/commands/process_services.hpp"
#include "proxy/net/checked_parser.hpp"
#include "proxy/sessions/client_connection.hpp"
#include "proxy/sessions/session_guard.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::proxy;
namespace telemetry = gistproxy::telemetry;
namespace fs = std::filesystem;

namespace {

// A self-signed identity for the TLS listener, written where --tls-cert reads it.
void write_identity(const fs::path& cert, const fs::path& key) {
  EVP_PKEY* pkey = EVP_EC_gen("P-256");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400 * 365);
  X509_set_pubkey(x, pkey);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, X509_get_subject_name(x));
  X509_sign(x, pkey, EVP_sha256());
  FILE* c = std::fopen(cert.c_str(), "w");
  PEM_write_X509(c, x);
  std::fclose(c);
  FILE* k = std::fopen(key.c_str(), "w");
  PEM_write_PrivateKey(k, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(pkey);
}

constexpr std::string_view canned_answer =
    R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,)"
    R"("message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}})";

struct world {
  fs::path dir;
  telemetry::logger log{telemetry::log_level::off};
  std::optional<config> cfg;
  std::unique_ptr<process_services> process;
  std::unique_ptr<shard> sh;
  std::unique_ptr<tcp_acceptor> listener, upstream;
  asio::ssl::context client_tls{asio::ssl::context::tls_client};
  long in_flight = 0;  // upstream requests waiting for their answer

  world() {
    dir = fs::temp_directory_path() / ("gistproxy-server-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    write_identity(dir / "cert.pem", dir / "key.pem");
    upstream_port = pick_port();  // before the config names it
    auto parsed = parse_serve_args({"--upstream", "http://127.0.0.1:" + std::to_string(upstream_port), "--store",
                                    (dir / "store").string(), "--client-timeout", "300ms", "--idle-timeout", "300ms",
                                    "--upstream-timeout", "2s", "--tls-cert", (dir / "cert.pem").string(), "--tls-key",
                                    (dir / "key.pem").string(), "--log-level", "off"},
                                   nullptr);
    if (!parsed.cfg) __builtin_trap();
    cfg = std::move(parsed.cfg);
    process = std::make_unique<process_services>(*cfg, log);
    sh = std::make_unique<shard>(process->svc());
    listener = std::make_unique<tcp_acceptor>(sh->io(), tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    upstream = std::make_unique<tcp_acceptor>(sh->io(), tcp::endpoint(asio::ip::make_address("127.0.0.1"), upstream_port));
    asio::co_spawn(sh->io(), serve_upstream(), asio::detached);
    client_tls.set_verify_mode(asio::ssl::verify_none);
  }

  static std::uint16_t pick_port() {
    asio::io_context io;
    tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
  }
  std::uint16_t upstream_port = 0;

  // Answers every request at once with a chat completion, but a path with
  // "hang" in it, which waits until the proxy gives up on it.
  awaitable<void> serve_upstream() {
    for (;;) {
      auto [ec, socket] = co_await upstream->async_accept(use_nothrow);
      if (ec) co_return;
      asio::co_spawn(sh->io(), answer(std::move(socket)), asio::detached);
    }
  }
  awaitable<void> answer(tcp_socket socket) {
    beast::flat_buffer buffer;
    for (;;) {
      checked_request_parser<http::string_body> parser;
      parser.header_limit(1 << 20);
      parser.body_limit(64u << 20);
      auto [ec, n] = co_await http::async_read(socket, buffer, parser, use_nothrow);
      if (ec) co_return;
      if (++in_flight > 100) __builtin_trap();  // one client connection: never more than its streams
      if (parser.get().target().find("hang") != beast::string_view::npos) {
        char byte;
        co_await socket.async_read_some(asio::buffer(&byte, 1), use_nothrow);
        --in_flight;
        co_return;
      }
      http::response<http::string_body> res{http::status::ok, 11};
      res.set(http::field::content_type, "application/json");
      res.body() = std::string(canned_answer);
      res.prepare_payload();
      auto [wec, wn] = co_await http::async_write(socket, res, use_nothrow);
      --in_flight;
      if (wec) co_return;
    }
  }

  double session_failures() const {
    const std::string text = process->svc().registry.render();
    double total = 0;
    for (std::size_t at = text.find("\ngistproxy_session_failures_total{"); at != std::string::npos;
         at = text.find("\ngistproxy_session_failures_total{", at + 1)) {
      const auto value = text.find("} ", at);
      if (value != std::string::npos) total += std::atof(text.c_str() + value + 2);
    }
    return total;
  }
};

world& the_world() {
  static world w;
  return w;
}

enum class mode { cleartext, tls_inside, tls_records };

// Runs the ops against a connected client stream; each op's bytes are
// written in order, pauses let the server run.
// An input writes at most this much, and pauses this long in all: within
// libFuzzer's per-input time whatever the ops say.
constexpr std::size_t max_written = 4 << 20;
constexpr int max_paused_ms = 1000;

template <class Stream>
awaitable<void> play(Stream& stream, tcp_socket& socket, gistproxy::fuzz::input& in, bool& aborted) {
  std::size_t written = 0;
  int paused_ms = 0;
  while (!in.empty() && written < max_written) {
    const auto op = in.byte();
    std::string bytes;
    switch (op % 8) {
      case 0: bytes = std::string(in.take(in.byte())); break;  // up to 255 literal bytes
      case 1: bytes = std::string(in.take(in.u16())); break;  // up to 64 KiB
      case 2: {
        const char b = char(in.byte());
        bytes.assign(in.u16() * 2, b);  // up to 128 KiB of one byte
        break;
      }
      case 3: {  // a pause: the server reads and answers what it has
        const int ms = std::min(in.byte() % 20, std::max(0, max_paused_ms - paused_ms));
        paused_ms += ms;
        asio::steady_timer t(socket.get_executor(), std::chrono::milliseconds(ms));
        co_await t.async_wait(use_nothrow);
        continue;
      }
      case 4: {  // an abortive close: RST
        error_code ignored;
        socket.set_option(asio::socket_base::linger(true, 0), ignored);
        socket.close(ignored);
        aborted = true;
        co_return;
      }
      case 5: {
        error_code ignored;
        socket.shutdown(tcp_socket::shutdown_send, ignored);
        continue;
      }
      default: bytes.assign(1, char(in.byte())); break;
    }
    written += bytes.size();
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(bytes), use_nothrow);
    if (ec) co_return;
  }
}

// Reads whatever the server says until it closes (or a bound).
template <class Stream>
awaitable<void> drain(Stream& stream, tcp_socket& socket) {
  std::vector<char> sink(64 * 1024);
  asio::steady_timer bound(socket.get_executor(), std::chrono::seconds(2));
  bound.async_wait([&socket](error_code ec) {
    error_code ignored;
    if (!ec) socket.close(ignored);
  });
  for (;;) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(sink), use_nothrow);
    if (ec) break;
  }
  bound.cancel();
}

awaitable<void> client(world& w, mode m, gistproxy::fuzz::input& in, bool& done) {
  tcp_socket socket(w.sh->io());
  auto [cec] = co_await socket.async_connect(w.listener->local_endpoint(), use_nothrow);
  if (!cec) {
    bool aborted = false;
    if (m == mode::tls_inside) {
      asio::ssl::stream<tcp_socket&> tls(socket, w.client_tls);
      auto [hec] = co_await tls.async_handshake(asio::ssl::stream_base::client, use_nothrow);
      if (!hec) {
        co_await play(tls, socket, in, aborted);
        if (!aborted) co_await drain(tls, socket);
      }
    } else {
      co_await play(socket, socket, in, aborted);
      if (!aborted) {
        error_code ignored;
        socket.shutdown(tcp_socket::shutdown_send, ignored);
        co_await drain(socket, socket);
      }
    }
  }
  error_code ignored;
  socket.close(ignored);
  done = true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto& w = the_world();
  gistproxy::fuzz::input in(data, size);
  const auto m = static_cast<mode>(in.byte() % 3);
  auto& svc = w.process->svc();
  bool session_ended = false, client_done = false;
  w.listener->async_accept([&](error_code ec, tcp_socket socket) {
    if (ec) return;
    svc.live_connections.fetch_add(1);  // as the accept loop does: the session releases it
    auto on_end = [&](std::exception_ptr e) {
      if (e) count_session_failure(svc, "any", "session", e);
      session_ended = true;
    };
    if (m == mode::cleartext) asio::co_spawn(w.sh->io(), serve_client(*w.sh, std::move(socket)), on_end);
    else asio::co_spawn(w.sh->io(), serve_tls_client(*w.sh, std::move(socket), svc.client_tls->current()), on_end);
  });
  asio::co_spawn(w.sh->io(), client(w, m, in, client_done), asio::detached);
  // The client plays its ops and leaves (it reads for 2 s at most); the
  // session must end soon after. Both waits stay under libFuzzer's
  // per-input timeout (10 s in scripts/fuzz).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(6);
  while (!(session_ended && client_done) && std::chrono::steady_clock::now() < deadline)
    w.sh->io().run_for(std::chrono::milliseconds(10));
  if (!session_ended || !client_done) __builtin_trap();  // a wedged session
  // Its upstream hops end with it: nothing left waiting upstream.
  const auto settle = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (w.in_flight > 0 && std::chrono::steady_clock::now() < settle) w.sh->io().run_for(std::chrono::milliseconds(10));
  if (w.in_flight > 0) __builtin_trap();
  if (w.session_failures() > 0) __builtin_trap();  // the guard caught an exception: a bug
  return 0;
}
