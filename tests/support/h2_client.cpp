#include "tests/support/h2_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace gistproxy::testing {

struct h2_client_callbacks {
  static h2_client& self(void* u) { return *static_cast<h2_client*>(u); }
  static int header(nghttp2_session*, const nghttp2_frame* f, const std::uint8_t* name, std::size_t nl,
                    const std::uint8_t* value, std::size_t vl, std::uint8_t, void* u) {
    if (std::string_view(reinterpret_cast<const char*>(name), nl) == ":status")
      self(u).responses[f->hd.stream_id].status = std::stoi(std::string(reinterpret_cast<const char*>(value), vl));
    return 0;
  }
  static int data(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* d, std::size_t n, void* u) {
    self(u).responses[stream].body.append(reinterpret_cast<const char*>(d), n);
    return 0;
  }
  static int frame(nghttp2_session*, const nghttp2_frame* f, void* u) {
    if (f->hd.type != NGHTTP2_GOAWAY) return 0;
    self(u).goaway = f->goaway.error_code;
    self(u).goaway_last_stream = f->goaway.last_stream_id;
    return 0;
  }
  static int close(nghttp2_session*, std::int32_t stream, std::uint32_t code, void* u) {
    auto& r = self(u).responses[stream];
    r.closed = true;
    r.error_code = code;
    return 0;
  }
  static ssize_t upload(nghttp2_session*, std::int32_t stream, std::uint8_t* buf, std::size_t length,
                        std::uint32_t* flags, nghttp2_data_source*, void* u) {
    auto& [body, sent] = self(u).uploads_[stream];
    const std::size_t n = std::min(length, body.size() - sent);
    std::memcpy(buf, body.data() + sent, n);
    sent += n;
    if (sent == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return ssize_t(n);
  }
};

h2_client::h2_client(std::uint16_t port, std::uint32_t initial_window, const std::string& tls_ca) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("h2_client: connect failed");
  if (!tls_ca.empty()) start_tls(tls_ca);
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_header_callback(cb, h2_client_callbacks::header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2_client_callbacks::data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, h2_client_callbacks::frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2_client_callbacks::close);
  nghttp2_option* opt = nullptr;
  nghttp2_option_new(&opt);
  // nghttp2 bounds a header block by its uncompressed size (64 KB): tests
  // send HPACK-compressed blocks that decode to more, on purpose.
  nghttp2_option_set_max_send_header_block_length(opt, 1u << 20);
  nghttp2_session_client_new2(&session_, cb, this, opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  const nghttp2_settings_entry s[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, initial_window}};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, s, 1);
}

h2_client::~h2_client() {
  nghttp2_session_del(session_);
  if (tls_) SSL_free(tls_);
  if (tls_ctx_) SSL_CTX_free(tls_ctx_);
  if (fd_ >= 0) ::close(fd_);
}

void h2_client::start_tls(const std::string& ca) {
  tls_ctx_ = SSL_CTX_new(TLS_client_method());
  if (!tls_ctx_ || SSL_CTX_load_verify_locations(tls_ctx_, ca.c_str(), nullptr) != 1)
    throw std::runtime_error("h2_client: cannot load " + ca);
  SSL_CTX_set_verify(tls_ctx_, SSL_VERIFY_PEER, nullptr);
  tls_ = SSL_new(tls_ctx_);
  SSL_set_fd(tls_, fd_);
  SSL_set_tlsext_host_name(tls_, "localhost");
  SSL_set1_host(tls_, "localhost");
  static const unsigned char h2[] = {2, 'h', '2'};
  SSL_set_alpn_protos(tls_, h2, sizeof h2);
  if (SSL_connect(tls_) != 1) throw std::runtime_error("h2_client: TLS handshake failed");
  const unsigned char* chosen = nullptr;
  unsigned length = 0;
  SSL_get0_alpn_selected(tls_, &chosen, &length);
  if (std::string_view(reinterpret_cast<const char*>(chosen), length) != "h2")
    throw std::runtime_error("h2_client: the server did not choose h2");
}

bool h2_client::write_all(const void* data, std::size_t n) {
  if (tls_) return SSL_write(tls_, data, int(n)) == int(n);
  for (std::size_t at = 0; at < n;) {
    const auto sent = ::send(fd_, static_cast<const char*>(data) + at, n - at, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    at += std::size_t(sent);
  }
  return true;
}

long h2_client::read_some(char* buf, std::size_t n) {
  if (tls_) return SSL_read(tls_, buf, int(n));
  return ::recv(fd_, buf, n, 0);
}

std::int32_t h2_client::submit(const std::string& method, const std::string& path, const std::string& body,
                               const std::vector<std::pair<std::string, std::string>>& headers, bool end) {
  std::vector<std::pair<std::string, std::string>> all{
      {":method", method}, {":path", path}, {":scheme", "http"}, {":authority", "127.0.0.1"}};
  all.insert(all.end(), headers.begin(), headers.end());
  std::vector<nghttp2_nv> nva;
  for (auto& [n, v] : all)
    nva.push_back({reinterpret_cast<std::uint8_t*>(n.data()), reinterpret_cast<std::uint8_t*>(v.data()), n.size(),
                   v.size(), NGHTTP2_NV_FLAG_NONE});
  if (!end) return nghttp2_submit_headers(session_, NGHTTP2_FLAG_NONE, -1, nullptr, nva.data(), nva.size(), nullptr);
  if (body.empty()) return nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(), nullptr, nullptr);
  nghttp2_data_provider prd{};
  prd.read_callback = h2_client_callbacks::upload;
  const auto id = nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(), &prd, nullptr);
  uploads_[id] = {body, 0};
  return id;
}

void h2_client::open_window(std::int32_t stream, std::int32_t increment) {
  nghttp2_submit_window_update(session_, NGHTTP2_FLAG_NONE, stream, increment);
}

void h2_client::reset(std::int32_t stream) { nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL); }

void h2_client::send_raw(const std::string& bytes) {
  if (!write_all(bytes.data(), bytes.size())) ended = true;
}

bool h2_client::flush() {
  for (;;) {
    const std::uint8_t* data = nullptr;
    const auto n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) return n == 0;
    if (!write_all(data, std::size_t(n))) return false;
  }
}

bool h2_client::pump_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  bool can_send = true;
  while (!done() && !ended) {
    // A send the server refused (it closed on a flood) still leaves what it
    // said before, its GOAWAY, to read: only a read ends the pump.
    if (can_send && !flush()) can_send = false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};  // TLS may hold decrypted bytes the socket no longer shows
    if (!(tls_ && SSL_pending(tls_) > 0) && ::poll(&p, 1, int(std::min<long long>(left.count(), 100))) <= 0) continue;
    const auto n = read_some(buf, sizeof buf);
    if (n <= 0) {
      ended = true;
      break;
    }
    if (nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(buf), std::size_t(n)) < 0) ended = true;
  }
  return done();
}

}  // namespace gistproxy::testing
