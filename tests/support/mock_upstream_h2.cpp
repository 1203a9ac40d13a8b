#include "tests/support/mock_upstream_h2.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

#include "rewrite/eventstream/eventstream.hpp"
#include "tests/support/sigv4_verifier.hpp"

namespace gistproxy::testing {

struct mock_upstream_h2::state {
  mutable std::mutex mutex;
  std::vector<h2_request_seen> seen;
  int cancelled = 0;
  int connections = 0;
  bool goaway = false;
  bool refuse_reused = false;
};

namespace {

const std::string converse_answer =
    R"({"output":{"message":{"role":"assistant","content":[{"text":"verified over h2"}]}},"stopReason":"end_turn",)"
    R"("usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7},"metrics":{"latencyMs":1}})";

std::string event(const std::string& type, const std::string& payload) {
  return rewrite::eventstream::encode(rewrite::eventstream::make_message(
      {{":event-type", type}, {":content-type", "application/json"}, {":message-type", "event"}}, payload));
}

// One connection's streams: the request as it arrives, the answer as it goes.
struct connection {
  connection(const std::string& key, mock_upstream_h2::state& shared) : secret(key), st(shared) {}
  struct stream {
    h2_request_seen seen;
    std::vector<std::string> pieces;  // the answer's DATA frames, one per piece
    std::size_t piece = 0, offset = 0;
    bool stall = false;  // after the first piece, nothing more
  };
  const std::string& secret;
  mock_upstream_h2::state& st;
  nghttp2_session* session = nullptr;
  std::int32_t answered = 0;  // the last stream answered
  std::map<std::int32_t, stream> streams;

  static connection& self(void* u) { return *static_cast<connection*>(u); }

  static int header(nghttp2_session*, const nghttp2_frame* f, const std::uint8_t* n, std::size_t nl,
                    const std::uint8_t* v, std::size_t vl, std::uint8_t, void* u) {
    self(u).streams[f->hd.stream_id].seen.fields.emplace_back(std::string(reinterpret_cast<const char*>(n), nl),
                                                             std::string(reinterpret_cast<const char*>(v), vl));
    return 0;
  }
  static int data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* d, std::size_t n, void* u) {
    self(u).streams[id].seen.body.append(reinterpret_cast<const char*>(d), n);
    return 0;
  }
  static int frame(nghttp2_session*, const nghttp2_frame* f, void* u) {
    const bool request_end = (f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
                             (f->hd.flags & NGHTTP2_FLAG_END_STREAM);
    if (!request_end) return 0;
    auto& c = self(u);
    {
      std::lock_guard lock(c.st.mutex);
      if (c.answered && c.st.refuse_reused) {
        c.st.refuse_reused = false;
        nghttp2_submit_goaway(c.session, NGHTTP2_FLAG_NONE, c.answered, NGHTTP2_NO_ERROR, nullptr, 0);
        return 0;
      }
    }
    c.answered = f->hd.stream_id;
    c.answer(f->hd.stream_id);
    return 0;
  }
  static ssize_t read(nghttp2_session*, std::int32_t id, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                      nghttp2_data_source*, void* u) {
    auto& s = self(u).streams[id];
    if (s.stall && s.piece == 1) return NGHTTP2_ERR_DEFERRED;
    if (s.piece == s.pieces.size()) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    const auto& p = s.pieces[s.piece];
    const std::size_t n = std::min(length, p.size() - s.offset);
    std::memcpy(buf, p.data() + s.offset, n);
    s.offset += n;
    if (s.offset == p.size()) {
      ++s.piece;
      s.offset = 0;
      if (s.piece == s.pieces.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return ssize_t(n);
  }

  static int closed(nghttp2_session*, std::int32_t id, std::uint32_t code, void* u) {
    auto& c = self(u);
    if (code != NGHTTP2_NO_ERROR) {
      std::lock_guard lock(c.st.mutex);
      ++c.st.cancelled;
    }
    c.streams.erase(id);
    return 0;
  }
  // The connection ended: streams still open were given up.
  void ended() {
    std::lock_guard lock(st.mutex);
    st.cancelled += int(streams.size());
  }

  void answer(std::int32_t id) {
    auto& s = streams[id];
    const auto pseudo = s.seen.field(":path");
    const auto check = verify_sigv4(s.seen.field(":method"), pseudo, s.seen.fields, s.seen.body, secret);
    s.seen.verified = check.ok;
    s.seen.why = check.why;
    {
      std::lock_guard lock(st.mutex);
      st.seen.push_back(s.seen);
    }
    std::string status = "200", type = "application/json";
    if (!check.ok) {
      status = "403";
      s.pieces = {R"({"message":"The request signature we calculated does not match the signature you provided."})"};
    } else if (pseudo.ends_with("/converse-stream")) {
      type = "application/vnd.amazon.eventstream";
      s.stall = s.seen.body.find("stall") != std::string::npos;
      s.pieces = {event("messageStart", R"({"role":"assistant"})"),
                  event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"verified over h2"}})"),
                  event("messageStop", R"({"stopReason":"end_turn"})"),
                  event("metadata", R"({"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7},"metrics":{"latencyMs":1}})")};
    } else {
      s.pieces = {converse_answer};
    }
    std::string error_type = check.ok ? "" : "InvalidSignatureException";
    std::vector<nghttp2_nv> nva;
    auto add = [&](const char* n, const std::string& v) {
      nva.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(n)),
                     reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), std::strlen(n), v.size(),
                     NGHTTP2_NV_FLAG_NONE});
    };
    add(":status", status);
    add("content-type", type);
    if (!check.ok) add("x-amzn-errortype", error_type);
    nghttp2_data_provider provider{};
    provider.read_callback = read;
    nghttp2_submit_response(session, id, nva.data(), nva.size(), &provider);
    std::lock_guard lock(st.mutex);
    if (st.goaway) nghttp2_submit_goaway(session, NGHTTP2_FLAG_NONE, id, NGHTTP2_NO_ERROR, nullptr, 0);
  }
};

// One accepted socket, plain or TLS, its reads bounded by a 50 ms timeout
// (a timed-out read is `0` bytes, not an end).
struct socket_io {
  int fd;
  SSL* tls = nullptr;
  bool write_all(const std::uint8_t* p, std::size_t n) {
    while (n) {
      const auto w = tls ? SSL_write(tls, p, int(n)) : ::send(fd, p, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      p += w;
      n -= std::size_t(w);
    }
    return true;
  }
  // Bytes read; 0 on a timeout; -1 when the connection ended.
  long read_some(std::uint8_t* buf, std::size_t n) {
    if (tls) {
      const int r = SSL_read(tls, buf, int(n));
      if (r > 0) return r;
      const int e = SSL_get_error(tls, r);
      return e == SSL_ERROR_WANT_READ || (e == SSL_ERROR_SYSCALL && errno == EAGAIN) ? 0 : -1;
    }
    const auto r = ::recv(fd, buf, n, 0);
    if (r > 0) return r;
    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
  }
};

int choose_h2(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned inlen, void*) {
  for (unsigned i = 0; i < inlen; i += 1u + in[i])
    if (in[i] == 2 && i + 3 <= inlen && in[i + 1] == 'h' && in[i + 2] == '2') {
      *out = in + i + 1;
      *outlen = 2;
      return SSL_TLSEXT_ERR_OK;
    }
  return SSL_TLSEXT_ERR_ALERT_FATAL;  // no h2 offered: refused, as an h2-only server does
}

}  // namespace

std::string h2_request_seen::field(const std::string& name) const {
  for (const auto& [n, v] : fields)
    if (n == name) return v;
  return {};
}

std::string mock_upstream_h2::converse_stream_bytes() {
  return event("messageStart", R"({"role":"assistant"})") +
         event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"verified over h2"}})") +
         event("messageStop", R"({"stopReason":"end_turn"})") +
         event("metadata", R"({"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7},"metrics":{"latencyMs":1}})");
}

mock_upstream_h2::mock_upstream_h2(std::string secret_access_key, const std::string& tls_cert_file,
                                   const std::string& tls_key_file)
    : secret_(std::move(secret_access_key)), state_(std::make_shared<state>()) {
  if (!tls_cert_file.empty()) {
    tls_ = SSL_CTX_new(TLS_server_method());
    if (!tls_ || SSL_CTX_use_certificate_chain_file(tls_, tls_cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(tls_, tls_key_file.c_str(), SSL_FILETYPE_PEM) != 1)
      throw std::runtime_error("mock_upstream_h2: cannot load the TLS certificate");
    SSL_CTX_set_alpn_select_cb(tls_, choose_h2, nullptr);
  }
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 16) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("mock_upstream_h2: cannot listen");
  port_ = ntohs(a.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

mock_upstream_h2::~mock_upstream_h2() {
  stop_ = true;
  acceptor_.join();
  std::lock_guard lock(threads_mutex_);
  for (auto& t : connections_) t.join();
  ::close(listener_);
  if (tls_) SSL_CTX_free(tls_);
}

int mock_upstream_h2::connections() const {
  std::lock_guard lock(state_->mutex);
  return state_->connections;
}

void mock_upstream_h2::refuse_next_on_reused() {
  std::lock_guard lock(state_->mutex);
  state_->refuse_reused = true;
}

void mock_upstream_h2::goaway_after_answer(bool on) {
  std::lock_guard lock(state_->mutex);
  state_->goaway = on;
}

int mock_upstream_h2::cancelled() const {
  std::lock_guard lock(state_->mutex);
  return state_->cancelled;
}

std::vector<h2_request_seen> mock_upstream_h2::requests() const {
  std::lock_guard lock(state_->mutex);
  return state_->seen;
}

void mock_upstream_h2::accept_loop() {
  while (!stop_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) continue;
    {
      std::lock_guard lock(state_->mutex);
      ++state_->connections;
    }
    std::lock_guard lock(threads_mutex_);
    connections_.emplace_back([this, fd] { serve(fd); });
  }
}

void mock_upstream_h2::serve(int fd) {
  socket_io io{fd};
  if (tls_) {
    io.tls = SSL_new(tls_);
    SSL_set_fd(io.tls, fd);
    if (SSL_accept(io.tls) != 1) {
      SSL_free(io.tls);
      ::close(fd);
      return;
    }
  }
  timeval timeout{0, 50'000};  // after the handshake: each read waits at most this
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  connection c(secret_, *state_);
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_header_callback(cb, connection::header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, connection::data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, connection::frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, connection::closed);
  nghttp2_session_server_new(&c.session, cb, &c);
  nghttp2_session_callbacks_del(cb);
  nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, nullptr, 0);
  std::uint8_t buf[16 * 1024];
  while (!stop_) {
    for (;;) {  // one DATA frame per event-stream message: each piece is its own send
      const std::uint8_t* out = nullptr;
      const auto n = nghttp2_session_mem_send(c.session, &out);
      if (n <= 0 || !io.write_all(out, std::size_t(n))) break;
    }
    if (!nghttp2_session_want_read(c.session) && !nghttp2_session_want_write(c.session)) break;
    const auto n = io.read_some(buf, sizeof buf);
    if (n == 0) continue;
    if (n < 0 || nghttp2_session_mem_recv(c.session, buf, std::size_t(n)) < 0) break;
  }
  c.ended();
  nghttp2_session_del(c.session);
  // A graceful close, as a front end's: unread bytes at close() would make
  // the kernel reset the connection and cut the peer's last answer short.
  if (io.tls) SSL_shutdown(io.tls);
  ::shutdown(fd, SHUT_WR);
  for (int i = 0; i < 20 && ::recv(fd, buf, sizeof buf, 0) != 0 && !stop_; ++i) {
  }
  if (io.tls) SSL_free(io.tls);
  ::close(fd);
}

}  // namespace gistproxy::testing
