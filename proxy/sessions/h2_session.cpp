#include "proxy/sessions/h2_session.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/write.hpp>
#include <nghttp2/nghttp2.h>
#include <unordered_map>

#include "proxy/net/tls_stream.hpp"
#include "proxy/sessions/h2_stream.hpp"
#include "proxy/sessions/request_dispatch.hpp"
#include "proxy/sessions/session_guard.hpp"

namespace gistproxy::proxy {
namespace {

constexpr std::size_t read_size = 64 * 1024;

h2_limits limits_of(const config& cfg) {
  h2_limits l;
  l.max_body = cfg.max_body_bytes;
  l.request_time = cfg.client_timeout;
  l.max_receiving = 4 * cfg.max_body_bytes;  // README: four bodies of --max-body in flight per connection
  return l;
}

// One connection's state, shared by its reader, its writer and its streams'
// coroutines (each holds it, so it outlives the last of them).
// Frames go over `Stream` (the TCP socket, or TLS over it); the deadlines,
// cancellation and closing act on the TCP socket underneath.
template <class Stream>
class h2_session final : public h2_events, public h2_link, public std::enable_shared_from_this<h2_session<Stream>> {
 public:
  h2_session(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& write_deadline, session_handle& handle)
      : sh_(sh), svc_(sh.svc()), stream_(stream), socket_(socket), write_deadline_(write_deadline),
        read_deadline_(sh.deadlines(), socket),
        handle_(handle), conn_(*this, limits_of(sh.svc().cfg)), wake_(socket.get_executor()),
        done_(socket.get_executor()), request_clock_(socket.get_executor()) {}

  awaitable<void> run(beast::flat_buffer& buffer);

  // h2_link
  h2_connection& connection() override { return conn_; }
  void output_ready() override { wake_.cancel(); }

  // h2_events: called from inside the connection; requests start after it returns.
  void request_ready(h2_request r) override { ready_.push_back(std::move(r)); }
  // A stream not yet started when it closes is never started (start_ready
  // and serve_stream ask the connection whether it is still open).
  void stream_closed(std::int32_t id, std::uint32_t code) override {
    if (auto it = streams_.find(id); it != streams_.end()) it->second->closed(code == NGHTTP2_NO_ERROR);
  }
  void drained(std::int32_t id) override {
    if (auto it = streams_.find(id); it != streams_.end()) it->second->drained();
  }
  void refused(h2_refusal why) override {
    svc_.metrics.h2_refusals.labels({h2_refusal_name(why)}).inc();
  }
  void callback_failed() noexcept override {
    count_session_failure(svc_, "h2", "callback", std::current_exception());
  }

 private:
  bool feed(std::string_view bytes);
  void start_ready();
  // Each coroutine holds the session, so it outlives the last of them.
  static awaitable<void> serve_stream(std::shared_ptr<h2_session<Stream>> self, h2_request r);
  static awaitable<void> write_loop(std::shared_ptr<h2_session<Stream>> self);
  awaitable<void> write_frames();
  awaitable<void> wait_done();
  void stream_finished(std::int32_t id);
  void drain();
  void arm_request_clock();

  using std::enable_shared_from_this<h2_session<Stream>>::shared_from_this;
  using std::enable_shared_from_this<h2_session<Stream>>::weak_from_this;

  shard& sh_;
  services& svc_;
  Stream& stream_;
  tcp_socket& socket_;
  socket_deadline& write_deadline_;
  socket_deadline read_deadline_;  // the idle timeout, while no stream runs
  session_handle& handle_;
  h2_connection conn_;
  connection_memo memo_;  // the last tenant, trace and price looked up, for every stream
  asio::steady_timer wake_;  // the writer's: output is ready or the session ends
  asio::steady_timer done_;  // the reader's, at the end: a stream or the writer finished
  // Wakes at the earliest request time of a request still arriving, so it is
  // answered 408 while the client sends nothing (other streams may run).
  asio::steady_timer request_clock_;
  std::optional<h2_connection::clock::time_point> clock_at_;
  std::vector<h2_request> ready_;
  std::unordered_map<std::int32_t, h2_stream*> streams_;
  std::size_t running_ = 0;
  bool ending_ = false, writer_done_ = false;
};

template <class Stream>
bool h2_session<Stream>::feed(std::string_view bytes) {
  const bool ok = conn_.receive(bytes);
  start_ready();
  output_ready();
  arm_request_clock();
  return ok;
}

template <class Stream>
void h2_session<Stream>::start_ready() {
  for (auto& r : ready_) {
    // Reset in the same read as its request (or provoked into a reset by
    // the client): no one to answer, no upstream work to start.
    if (!conn_.open(r.stream)) {
      conn_.work_done(r.stream);
      continue;
    }
    svc_.metrics.h2_streams.get().inc();
    ++running_;  // counted now: the session waits for it even before it first runs
    handle_.busy = true;
    asio::co_spawn(socket_.get_executor(), serve_stream(shared_from_this(), std::move(r)),
                   counted_failure{&svc_, "h2", "stream"});
  }
  ready_.clear();
}

template <class Stream>
awaitable<void> h2_session<Stream>::run(beast::flat_buffer& buffer) {
  asio::co_spawn(socket_.get_executor(), write_loop(shared_from_this()), counted_failure{&svc_, "h2", "writer"});
  handle_.drain = [weak = weak_from_this()] {
    if (auto self = weak.lock()) self->drain();
  };
  try {
    const auto first = buffer.data();
    bool ok = feed(std::string_view(static_cast<const char*>(first.data()), first.size()));
    buffer.consume(buffer.size());
    buffer.shrink_to_fit();
    std::vector<char> in(read_size);
    while (ok) {
      if (running_ == 0) read_deadline_.set(svc_.cfg.idle_timeout);
      auto [ec, n] = co_await stream_.async_read_some(asio::buffer(in), use_nothrow);
      read_deadline_.disarm();
      if (ec) break;  // a drain ends the connection by GOAWAY (drain()), once its streams have
      ok = feed(std::string_view(in.data(), n));
    }
  } catch (...) {
    // The reader must not leave while streams and the writer still use the
    // socket: the connection ends below, after them.
    count_session_failure(svc_, "h2", "session", std::current_exception());
    error_code ignored;
    socket_.close(ignored);
  }
  // The client left, broke the protocol or flooded (the GOAWAY is queued),
  // or the proxy drains: every stream still running is cancelled (its
  // upstream hop too), then what is queued goes out and the connection closes.
  ending_ = true;
  handle_.drain = nullptr;
  request_clock_.cancel();
  for (auto& [id, stream] : streams_) stream->closed(false);
  co_await wait_done();
}

template <class Stream>
awaitable<void> h2_session<Stream>::wait_done() {
  while (running_ > 0) {
    done_.expires_at(asio::steady_timer::time_point::max());
    co_await done_.async_wait(use_nothrow);
  }
  output_ready();
  while (!writer_done_) {
    done_.expires_at(asio::steady_timer::time_point::max());
    co_await done_.async_wait(use_nothrow);
  }
}

template <class Stream>
awaitable<void> h2_session<Stream>::write_loop(std::shared_ptr<h2_session<Stream>> self) {
  auto& s = *self;
  try {
    co_await s.write_frames();
  } catch (...) {
    count_session_failure(s.svc_, "h2", "writer", std::current_exception());
    error_code ignored;
    s.socket_.close(ignored);  // the reader ends, and with it every stream
  }
  s.writer_done_ = true;
  s.done_.cancel();
}

template <class Stream>
awaitable<void> h2_session<Stream>::write_frames() {
  auto& s = *this;
  std::string out;
  error_code ignored;
  for (;;) {
    out.clear();
    if (!s.conn_.take_output(out)) {
      // Neither side has more to say (a drain's GOAWAY went out and its streams
      // ended, or the client's GOAWAY): the reader stops too.
      if (s.conn_.finished()) s.socket_.cancel(ignored);
      if (s.ending_ && s.running_ == 0) break;
      s.wake_.expires_at(asio::steady_timer::time_point::max());
      co_await s.wake_.async_wait(use_nothrow);
      continue;
    }
    auto bounded = s.write_deadline_.arm(s.svc_.cfg.client_timeout);
    auto [ec, n] = co_await asio::async_write(s.stream_, asio::buffer(out), use_nothrow);
    if (ec) {
      s.socket_.close(ignored);  // the reader ends, and with it every stream
      break;
    }
    // A GOAWAY that ends the connection went out: the reader stops too.
    if (s.conn_.finished()) s.socket_.cancel(ignored);
  }
}

template <class Stream>
awaitable<void> h2_session<Stream>::serve_stream(std::shared_ptr<h2_session<Stream>> self, h2_request r) {
  auto& s = *self;
  h2_stream stream(s, r.stream, s.socket_.get_executor(), s.svc_.cfg.client_timeout);
  s.streams_[r.stream] = &stream;
  stream.pseudo(std::move(r.pseudo));
  struct finished {
    h2_session& s;
    h2_stream& stream;
    ~finished() {
      s.streams_.erase(stream.id());
      s.stream_finished(stream.id());
    }
  } guard{s, stream};
  // Closed between its start and now (a reset the writer sent): its hop
  // never goes out.
  if (s.ending_ || !s.conn_.open(r.stream)) stream.closed(false);
  try {
    // The connection's memo, as on HTTP/1.1 (its streams mostly share a key
    // and a conversation): every use of it runs between two suspensions, on
    // this connection's one thread, so concurrent streams never see it half-set.
    co_await dispatch(s.sh_, stream, s.memo_, r.request, std::move(r.refusal));
  } catch (...) {
    count_session_failure(s.svc_, "h2", "stream", std::current_exception());  // this stream only
  }
  // A response that could not end cleanly (its head was out when it failed)
  // ends abnormally, as a closed HTTP/1.1 connection would say.
  if (!stream.complete() && !stream.is_closed()) s.conn_.reset(r.stream, NGHTTP2_INTERNAL_ERROR);
  s.output_ready();
}

template <class Stream>
void h2_session<Stream>::stream_finished(std::int32_t id) {
  conn_.work_done(id);  // its slot is free (at once if the stream has ended)
  if (--running_ > 0) return;
  handle_.busy = false;
  done_.cancel();
  if (!ending_) read_deadline_.set(svc_.cfg.idle_timeout);  // idle from now: the pending read is bounded again
  if (svc_.draining && !ending_) drain();
  if (ending_) output_ready();  // the writer may stop now
}

template <class Stream>
void h2_session<Stream>::arm_request_clock() {
  const auto next = conn_.next_deadline();
  if (!next || ending_ || (clock_at_ && *clock_at_ <= *next)) return;
  clock_at_ = next;
  request_clock_.expires_at(*next);  // a wait set for a later time is cancelled
  request_clock_.async_wait([weak = weak_from_this()](error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->ending_) return;  // re-armed, or the session is ending
    self->clock_at_.reset();
    self->conn_.expire(h2_connection::clock::now());
    self->start_ready();
    self->output_ready();
    self->arm_request_clock();
  });
}

// The proxy drains: GOAWAY, and the connection ends once its streams have
// (the writer sees it finished); new streams are refused meanwhile.
template <class Stream>
void h2_session<Stream>::drain() {
  if (ending_) return;
  conn_.drain();
  output_ready();
}

}  // namespace

template <class Stream>
awaitable<void> serve_h2(shard& sh, Stream& stream, tcp_socket& socket, socket_deadline& deadline,
                         beast::flat_buffer& buffer, session_handle& handle) {
  auto session = std::make_shared<h2_session<Stream>>(sh, stream, socket, deadline, handle);
  co_await session->run(buffer);
}

template awaitable<void> serve_h2(shard&, tcp_socket&, tcp_socket&, socket_deadline&, beast::flat_buffer&,
                                  session_handle&);
template awaitable<void> serve_h2(shard&, tls_stream&, tcp_socket&, socket_deadline&, beast::flat_buffer&,
                                  session_handle&);

}  // namespace gistproxy::proxy
