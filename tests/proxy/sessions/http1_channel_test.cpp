// The HTTP/1 channel's framing (proxy/sessions/http1_channel.hpp): given a
// request, a head and body pieces, the exact bytes of each write the client
// gets — status line, end-to-end fields, Content-Length or chunked coding,
// the last chunk, and Connection where the connection's fate needs saying.
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <functional>
#include <string>
#include <vector>

#include "proxy/sessions/http1_channel.hpp"

using namespace gistproxy::proxy;

namespace {

// Keeps each write as the client would receive it; no socket.
class recording_channel final : public http1_channel {
 public:
  recording_channel(const http::request<http::empty_body>& request, const std::atomic<bool>& draining)
      : http1_channel(request.version(), request.keep_alive(), draining) {}
  void watch(client_watch&) override {}
  executor get_executor() override { return io_.get_executor(); }

  // Runs `write` (one or more of the channel's calls) to its end.
  void run(std::function<awaitable<void>(recording_channel&)> write) {
    asio::co_spawn(io_, write(*this), asio::detached);
    io_.run();
    io_.restart();
  }
  std::vector<std::string> writes;
  // What the calls returned: checked after run(), never inside a coroutine
  // (GCC evaluates a co_await inside Catch's assertion macros more than once).
  std::vector<error_code> results;
  bool all_ok() const {
    for (const auto& ec : results)
      if (ec) return false;
    return true;
  }

 private:
  awaitable<error_code> send(std::span<const asio::const_buffer> bytes) override {
    std::string& out = writes.emplace_back();
    for (const auto& b : bytes) out.append(static_cast<const char*>(b.data()), b.size());
    co_return error_code{};
  }
  asio::io_context io_;
};

http::request<http::empty_body> request_of(unsigned version, std::string_view connection = {}) {
  http::request<http::empty_body> r;
  r.method(http::verb::post);
  r.target("/v1/chat/completions");
  r.version(version);
  if (!connection.empty()) r.set(http::field::connection, connection);
  return r;
}

// An upstream's head: end-to-end fields and the hop-by-hop ones a proxy drops.
http::response_header<> upstream_head(std::string_view content_type) {
  http::response_header<> h;
  h.result(200);
  h.set(http::field::content_type, content_type);
  h.set(http::field::connection, "keep-alive");
  h.set(http::field::transfer_encoding, "chunked");
  h.set("x-request-id", "req_1");
  return h;
}

}  // namespace

TEST_CASE("a whole HTTP/1.1 response is its status line, end-to-end fields and Content-Length, then the body, in one write") {
  std::atomic<bool> draining{false};
  const auto request = request_of(11);
  recording_channel channel(request, draining);
  const auto from = upstream_head("application/json");
  channel.run([&](recording_channel& c) -> awaitable<void> {
    const reply_head head{200, "OK", from, 2, false};
    error_code ec;
    ec = co_await c.whole_response(head, "{}");
    c.results.push_back(ec);
  });
  CHECK(channel.results.size() == 1);
  CHECK(channel.all_ok());
  REQUIRE(channel.writes.size() == 1);
  CHECK(channel.writes[0] ==
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-request-id: req_1\r\nContent-Length: 2\r\n\r\n{}");
  CHECK(channel.keeps_connection());
}

TEST_CASE("a streamed HTTP/1.1 response of unknown length is chunked, and the last piece adds the last chunk") {
  std::atomic<bool> draining{false};
  const auto request = request_of(11);
  recording_channel channel(request, draining);
  const auto from = upstream_head("text/event-stream");
  const std::string twenty_six(26, 'x');
  channel.run([&](recording_channel& c) -> awaitable<void> {
    const reply_head head{200, "OK", from, std::nullopt, false};
    error_code ec;
    ec = co_await c.begin_response(head);
    c.results.push_back(ec);
    ec = co_await c.write_body("data: a\n\n", false);
    c.results.push_back(ec);
    ec = co_await c.write_body(twenty_six, false);
    c.results.push_back(ec);
    ec = co_await c.write_body("", false);  // nothing to say: no write, and no last chunk
    c.results.push_back(ec);
    ec = co_await c.write_body("bye", true);
    c.results.push_back(ec);
  });
  CHECK(channel.results.size() == 5);
  CHECK(channel.all_ok());
  REQUIRE(channel.writes.size() == 4);
  CHECK(channel.writes[0] ==
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nx-request-id: req_1\r\nTransfer-Encoding: chunked\r\n\r\n");
  CHECK(channel.writes[1] == "9\r\ndata: a\n\n\r\n");
  CHECK(channel.writes[2] == "1a\r\n" + twenty_six + "\r\n");
  CHECK(channel.writes[3] == "3\r\nbye\r\n0\r\n\r\n");
  CHECK(channel.keeps_connection());
}

TEST_CASE("an empty last piece of a chunked response is the last chunk alone") {
  std::atomic<bool> draining{false};
  const auto request = request_of(11);
  recording_channel channel(request, draining);
  const auto from = upstream_head("text/event-stream");
  channel.run([&](recording_channel& c) -> awaitable<void> {
    const reply_head head{200, {}, from, std::nullopt, false};
    error_code ec;
    ec = co_await c.begin_response(head);
    c.results.push_back(ec);
    ec = co_await c.write_body("", true);
    c.results.push_back(ec);
  });
  CHECK(channel.all_ok());
  REQUIRE(channel.writes.size() == 2);
  CHECK(channel.writes[1] == "0\r\n\r\n");
}

TEST_CASE("a streamed response of known length has Content-Length and its pieces go as they are") {
  std::atomic<bool> draining{false};
  const auto request = request_of(11);
  recording_channel channel(request, draining);
  const auto from = upstream_head("application/octet-stream");
  channel.run([&](recording_channel& c) -> awaitable<void> {
    const reply_head head{200, "OK", from, 6, false};
    co_await c.begin_response(head);
    co_await c.write_body("abc", false);
    co_await c.write_body("def", false);
    co_await c.write_body("", true);  // the length ends the body: nothing more to write
  });
  REQUIRE(channel.writes.size() == 3);
  CHECK(channel.writes[0] ==
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nx-request-id: req_1\r\nContent-Length: 6\r\n\r\n");
  CHECK(channel.writes[1] == "abc");
  CHECK(channel.writes[2] == "def");
  CHECK(channel.keeps_connection());
}

TEST_CASE("an HTTP/1.0 stream of unknown length is close-delimited: no chunks, and the connection ends after it") {
  std::atomic<bool> draining{false};
  const auto request = request_of(10, "keep-alive");
  recording_channel channel(request, draining);
  const auto from = upstream_head("text/event-stream");
  channel.run([&](recording_channel& c) -> awaitable<void> {
    const reply_head head{200, "OK", from, std::nullopt, false};
    co_await c.begin_response(head);
    co_await c.write_body("data: a\n\n", false);
    co_await c.write_body("", true);
  });
  REQUIRE(channel.writes.size() == 2);
  CHECK(channel.writes[0] == "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\nx-request-id: req_1\r\n\r\n");
  CHECK(channel.writes[1] == "data: a\n\n");
  CHECK_FALSE(channel.keeps_connection());
}

TEST_CASE("an HTTP/1.0 client that asked to keep the connection is told keep-alive with a response of known length") {
  std::atomic<bool> draining{false};
  const auto request = request_of(10, "keep-alive");
  recording_channel channel(request, draining);
  http::fields none;
  channel.run([&](recording_channel& c) -> awaitable<void> {
    const reply_head head{204, {}, none, std::nullopt, false};
    co_await c.whole_response(head, {});
  });
  REQUIRE(channel.writes.size() == 1);
  CHECK(channel.writes[0] == "HTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\n");
  CHECK(channel.keeps_connection());
}

TEST_CASE("Connection: close when the exchange ends the connection, a drain has begun, or the client asked for it") {
  std::atomic<bool> draining{false};
  http::fields none;
  const reply_head ends{404, "Not Here", none, 0, true};
  const reply_head stays{404, {}, none, 0, false};
  const auto keeping = request_of(11);
  const auto closing = request_of(11, "close");
  SECTION("the exchange ends it (an error answer to a refused request)") {
    recording_channel channel(keeping, draining);
    channel.run([&](recording_channel& c) -> awaitable<void> { co_await c.whole_response(ends, {}); });
    REQUIRE(channel.writes.size() == 1);
    CHECK(channel.writes[0] == "HTTP/1.1 404 Not Here\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    CHECK_FALSE(channel.keeps_connection());
  }
  SECTION("a drain began before the head") {
    recording_channel channel(keeping, draining);
    draining = true;
    channel.run([&](recording_channel& c) -> awaitable<void> { co_await c.whole_response(stays, {}); });
    REQUIRE(channel.writes.size() == 1);
    CHECK(channel.writes[0] == "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    CHECK_FALSE(channel.keeps_connection());
  }
  SECTION("the client asked for it") {
    recording_channel channel(closing, draining);
    channel.run([&](recording_channel& c) -> awaitable<void> { co_await c.whole_response(stays, {}); });
    REQUIRE(channel.writes.size() == 1);
    CHECK(channel.writes[0] == "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    CHECK_FALSE(channel.keeps_connection());
  }
}

TEST_CASE("a whole response given a length and no body states the length and sends nothing more, as a HEAD answer does") {
  std::atomic<bool> draining{false};
  auto request = request_of(11);
  request.method(http::verb::head);
  recording_channel channel(request, draining);
  const auto from = upstream_head("application/json");
  channel.run([&](recording_channel& c) -> awaitable<void> {
    const reply_head head{200, "OK", from, 1234, false};
    co_await c.whole_response(head, {});
  });
  REQUIRE(channel.writes.size() == 1);
  CHECK(channel.writes[0] ==
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-request-id: req_1\r\nContent-Length: 1234\r\n\r\n");
}
