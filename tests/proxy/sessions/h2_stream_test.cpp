// Per-stream back-pressure (proxy/sessions/h2_stream.hpp): a writer waits
// while more than the bound is buffered for a stream whose client window is
// shut, goes on once the client opens it, and gives up (resetting the
// stream) when the client never does. An in-memory nghttp2 client, no sockets.
#include <catch2/catch.hpp>
#include <nghttp2/nghttp2.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "proxy/sessions/h2_stream.hpp"

using namespace gistproxy::proxy;

namespace {

struct session_double final : h2_link, h2_events {
  h2_connection conn{*this, h2_limits{}};
  h2_stream* stream = nullptr;
  std::vector<h2_request> requests;
  std::uint32_t reset_code = 0;
  h2_connection& connection() override { return conn; }
  void output_ready() override {}
  void request_ready(h2_request r) override { requests.push_back(std::move(r)); }
  void stream_closed(std::int32_t, std::uint32_t code) override {
    reset_code = code;
    if (stream) stream->closed(code == NGHTTP2_NO_ERROR);
  }
  void drained(std::int32_t) override {
    if (stream) stream->drained();
  }
  void refused(h2_refusal) override {}
  void callback_failed() noexcept override {}
};

// A client whose streams start with a shut window.
struct shut_client {
  nghttp2_session* session = nullptr;
  std::size_t got = 0;
  shut_client() {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        cb, [](nghttp2_session*, std::uint8_t, std::int32_t, const std::uint8_t*, std::size_t n, void* u) {
          static_cast<shut_client*>(u)->got += n;
          return 0;
        });
    nghttp2_session_client_new(&session, cb, this);
    nghttp2_session_callbacks_del(cb);
    const nghttp2_settings_entry s[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 0}};
    nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, s, 1);
  }
  ~shut_client() { nghttp2_session_del(session); }
  void pump(h2_connection& server) {
    for (int round = 0; round < 16; ++round) {
      std::string up, down;
      const std::uint8_t* p = nullptr;
      for (ssize_t n; (n = nghttp2_session_mem_send(session, &p)) > 0;) up.append(reinterpret_cast<const char*>(p), n);
      if (!up.empty()) server.receive(up);
      server.take_output(down);
      if (!down.empty()) nghttp2_session_mem_recv(session, reinterpret_cast<const std::uint8_t*>(down.data()), down.size());
      if (up.empty() && down.empty()) return;
    }
  }
};

std::int32_t get(shut_client& c) {
  std::string n[] = {":method", ":path", ":scheme", ":authority"}, v[] = {"GET", "/", "http", "a"};
  nghttp2_nv nva[4];
  for (int i = 0; i < 4; ++i)
    nva[i] = {reinterpret_cast<std::uint8_t*>(n[i].data()), reinterpret_cast<std::uint8_t*>(v[i].data()), n[i].size(),
              v[i].size(), NGHTTP2_NV_FLAG_NONE};
  return nghttp2_submit_request(c.session, nullptr, nva, 4, nullptr, nullptr);
}

}  // namespace

TEST_CASE("an h2 writer waits while its stream's window is shut and goes on once the client opens it") {
  asio::io_context io;
  session_double s;
  shut_client c;
  const auto id = get(c);
  c.pump(s.conn);
  REQUIRE(s.requests.size() == 1);
  h2_stream stream(s, id, io.get_executor(), std::chrono::seconds(30));
  s.stream = &stream;
  const std::string piece(3 * h2_stream::buffer_bound, 'x');
  bool written = false;
  error_code result = asio::error::would_block;
  asio::co_spawn(io, [&]() -> awaitable<void> {
    http::fields none;
    const error_code head = co_await stream.head(200, none, std::nullopt, false);
    CHECK_FALSE(head);
    result = co_await stream.data(piece, true);
    written = true;
  }, asio::detached);
  io.poll();
  c.pump(s.conn);
  io.poll();
  CHECK_FALSE(written);  // the client took nothing: the writer waits
  CHECK(s.conn.buffered(id) == piece.size());
  CHECK(c.got == 0);
  nghttp2_submit_window_update(c.session, NGHTTP2_FLAG_NONE, id, 1 << 20);
  nghttp2_submit_window_update(c.session, NGHTTP2_FLAG_NONE, 0, 1 << 20);  // and the connection's
  c.pump(s.conn);
  io.poll();
  CHECK(written);
  CHECK_FALSE(result);
  c.pump(s.conn);
  CHECK(c.got == piece.size());
  CHECK(stream.complete());
}

TEST_CASE("an h2 writer whose client never opens the window gives up after the write timeout and resets the stream") {
  asio::io_context io;
  session_double s;
  shut_client c;
  const auto id = get(c);
  c.pump(s.conn);
  REQUIRE(s.requests.size() == 1);
  h2_stream stream(s, id, io.get_executor(), std::chrono::milliseconds(20));
  s.stream = &stream;
  const std::string piece(2 * h2_stream::buffer_bound, 'x');
  error_code result;
  bool written = false;
  asio::co_spawn(io, [&]() -> awaitable<void> {
    http::fields none;
    co_await stream.head(200, none, std::nullopt, false);
    result = co_await stream.data(piece, false);
    written = true;
  }, asio::detached);
  io.run();  // ends once the writer gave up: nothing else is pending
  REQUIRE(written);
  CHECK(result == beast::error::timeout);
  c.pump(s.conn);
  CHECK(s.reset_code == NGHTTP2_CANCEL);
}
