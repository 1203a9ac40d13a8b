#include "tests/support/tls_client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <array>
#include <optional>
#include <sstream>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gistproxy::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;

struct tls_client::impl {
  asio::io_context io;
  ssl::context ctx{ssl::context::tls_client};
  std::optional<ssl::stream<asio::ip::tcp::socket>> stream;  // made once ctx is set up: SSL_new copies it
  beast::flat_buffer buffer;
  std::chrono::milliseconds timeout;
  std::string error;

  // Runs the pending operation to completion or the timeout (then closes).
  void run() {
    io.restart();
    io.run_for(timeout);
    if (!io.stopped()) {
      beast::error_code ignored;
      stream->next_layer().close(ignored);
      io.run();  // the aborted operation completes
    }
  }
};

tls_client::tls_client(std::uint16_t port, const tls_client_options& options, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<impl>()) {
  auto& i = *impl_;
  i.timeout = timeout;
  i.ctx.load_verify_file(options.ca.string());
  i.ctx.set_verify_mode(ssl::verify_peer);
  if (!options.cert.empty()) {
    i.ctx.use_certificate_chain_file(options.cert.string());
    i.ctx.use_private_key_file(options.key.string(), ssl::context::pem);
  }
  i.stream.emplace(i.io, i.ctx);
  SSL* s = i.stream->native_handle();
  SSL_set_tlsext_host_name(s, "localhost");
  SSL_set1_host(s, "localhost");
  if (!options.alpn.empty()) {
    std::string wire(1, char(options.alpn.size()));
    wire += options.alpn;
    SSL_set_alpn_protos(s, reinterpret_cast<const unsigned char*>(wire.data()), unsigned(wire.size()));
  }
  beast::error_code ec;
  i.stream->next_layer().connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) {
    i.error = "connect: " + ec.message();
    return;
  }
  i.error = "handshake did not finish";
  i.stream->async_handshake(ssl::stream_base::client, [&i](beast::error_code e) { i.error = e ? e.message() : ""; });
  i.run();
}

tls_client::~tls_client() = default;

const std::string& tls_client::handshake_error() const { return impl_->error; }

std::string tls_client::peer_common_name() const {
  X509* peer = SSL_get1_peer_certificate(impl_->stream->native_handle());
  if (!peer) return {};
  std::array<char, 256> cn{};
  X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn.data(), int(cn.size()));
  X509_free(peer);
  return cn.data();
}

std::string tls_client::negotiated_alpn() const {
  const unsigned char* p = nullptr;
  unsigned n = 0;
  SSL_get0_alpn_selected(impl_->stream->native_handle(), &p, &n);
  return p ? std::string(reinterpret_cast<const char*>(p), n) : std::string();
}

http_result tls_client::request(const std::string& method, const std::string& target, const std::string& body) {
  http::request<http::string_body> req(http::string_to_verb(method), target, 11);
  req.set(http::field::host, "localhost");
  req.set(http::field::content_type, "application/json");
  req.set(http::field::authorization, "Bearer sk-test");
  req.body() = body;
  req.prepare_payload();
  std::ostringstream bytes;
  bytes << req;
  return raw_request(bytes.str());
}

http_result tls_client::raw_request(const std::string& bytes) {
  auto& i = *impl_;
  http_result out;
  if (!i.error.empty()) return out.error = "no connection: " + i.error, out;
  http::response<http::string_body> res;
  out.error = "no answer in time";
  asio::async_write(*i.stream, asio::buffer(bytes), [&](beast::error_code e, std::size_t) {
    if (e) return void(out.error = "write: " + e.message());
    http::async_read(*i.stream, i.buffer, res, [&](beast::error_code r, std::size_t) {
      out.error = r ? "read: " + r.message() : "";
    });
  });
  i.run();
  if (!out.error.empty()) return out;
  out.status = int(res.result_int());
  for (const auto& f : res) {
    std::string name(f.name_string());
    for (auto& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(f.value());
  }
  out.body = res.body();
  return out;
}

}  // namespace gistproxy::testing
