#include "tests/support/http_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <optional>

namespace gistproxy::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);
using clock_type = std::chrono::steady_clock;

namespace {

// Runs one coroutine on `io` for at most `timeout`; false if it did not finish.
template <class F>
bool run_bounded(asio::io_context& io, F&& body, std::chrono::milliseconds timeout) {
  bool done = false;
  io.restart();
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { co_await body(); done = true; }, asio::detached);
  io.run_for(timeout);
  if (!done) {
    io.stop();
    io.restart();
    io.poll();
  }
  return done;
}

http::request<http::string_body> make_request(const std::string& method, const std::string& target,
                                              const std::string& body,
                                              const std::map<std::string, std::string>& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  if (!body.empty() || method == "POST" || method == "PUT") req.prepare_payload();
  return req;
}

void fill(http_result& out, http::response<http::string_body>& res) {
  out.status = int(res.result_int());
  for (const auto& f : res) {
    std::string name(f.name_string());
    for (auto& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(f.value());
  }
  out.body = std::move(res.body());
}

}  // namespace

struct http_connection::impl {
  asio::io_context io;
  beast::tcp_stream stream{io};
  beast::flat_buffer buffer;
};

http_connection::http_connection(std::uint16_t port) : impl_(new impl) {
  impl_->stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
}

http_connection::~http_connection() { delete impl_; }

bool http_connection::is_open() const { return impl_->stream.socket().is_open(); }

http_result http_connection::request(const std::string& method, const std::string& target, const std::string& body,
                                     const std::map<std::string, std::string>& headers) {
  http_result out;
  auto req = make_request(method, target, body, headers);
  bool finished = run_bounded(
      impl_->io,
      [&]() -> asio::awaitable<void> {
        auto [wec, wn] = co_await http::async_write(impl_->stream, req, nothrow);
        if (wec) {
          out.error = "write: " + wec.message();
          co_return;
        }
        http::response_parser<http::string_body> parser;
        parser.body_limit(1ull << 30);
        auto [rec, rn] = co_await http::async_read(impl_->stream, impl_->buffer, parser, nothrow);
        if (rec) {
          out.error = "read: " + rec.message();
          out.status = parser.is_header_done() ? int(parser.get().result_int()) : 0;
          co_return;
        }
        fill(out, parser.get());
      },
      std::chrono::seconds(20));
  if (!finished) out.error = "timeout";
  return out;
}

http_result http_request(std::uint16_t port, const std::string& method, const std::string& target,
                         const std::string& body, const std::map<std::string, std::string>& headers,
                         std::chrono::milliseconds timeout) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  http_result out;
  auto req = make_request(method, target, body, headers);
  req.keep_alive(false);
  bool finished = run_bounded(
      io,
      [&]() -> asio::awaitable<void> {
        auto [cec] = co_await stream.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), nothrow);
        if (cec) {
          out.error = "connect: " + cec.message();
          co_return;
        }
        auto [wec, wn] = co_await http::async_write(stream, req, nothrow);
        if (wec) {
          out.error = "write: " + wec.message();
          co_return;
        }
        beast::flat_buffer buffer;
        http::response_parser<http::string_body> parser;
        parser.body_limit(1ull << 30);
        if (req.method() == http::verb::head) parser.skip(true);  // a HEAD answer has no body
        auto [rec, rn] = co_await http::async_read(stream, buffer, parser, nothrow);
        if (rec) {
          out.error = "read: " + rec.message();
          out.status = parser.is_header_done() ? int(parser.get().result_int()) : 0;
          co_return;
        }
        fill(out, parser.get());
      },
      timeout);
  if (!finished) out.error = "timeout";
  return out;
}

streamed_result http_stream(std::uint16_t port, const std::string& method, const std::string& target,
                            const std::string& body, std::chrono::milliseconds timeout) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  streamed_result out;
  auto req = make_request(method, target, body, {});
  clock_type::time_point sent;
  bool finished = run_bounded(
      io,
      [&]() -> asio::awaitable<void> {
        auto [cec] = co_await stream.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), nothrow);
        if (cec) {
          out.error = "connect: " + cec.message();
          co_return;
        }
        sent = clock_type::now();
        auto [wec, wn] = co_await http::async_write(stream, req, nothrow);
        if (wec) {
          out.error = "write: " + wec.message();
          co_return;
        }
        beast::flat_buffer buffer;
        http::response_parser<http::buffer_body> parser;
        parser.body_limit(boost::none);
        auto [hec, hn] = co_await http::async_read_header(stream, buffer, parser, nothrow);
        if (hec) {
          out.error = "header: " + hec.message();
          co_return;
        }
        out.status = int(parser.get().result_int());
        char piece[65536];
        while (!parser.is_done()) {
          parser.get().body().data = piece;
          parser.get().body().size = sizeof piece;
          auto [ec, n] = co_await http::async_read_some(stream, buffer, parser, nothrow);
          if (ec == http::error::need_buffer) ec = {};
          if (ec) {
            out.error = "body: " + ec.message();
            co_return;
          }
          std::size_t got = sizeof piece - parser.get().body().size;
          if (got)
            out.pieces.push_back(
                {std::chrono::duration<double, std::milli>(clock_type::now() - sent).count(), std::string(piece, got)});
        }
      },
      timeout);
  if (!finished) out.error = "timeout";
  return out;
}

std::string raw_exchange(std::uint16_t port, const std::string& bytes, std::chrono::milliseconds timeout) {
  asio::io_context io;
  tcp::socket socket(io);
  std::string received;
  run_bounded(
      io,
      [&]() -> asio::awaitable<void> {
        auto [cec] = co_await socket.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), nothrow);
        if (cec) co_return;
        auto [wec, wn] = co_await asio::async_write(socket, asio::buffer(bytes), nothrow);
        if (wec) co_return;
        char buf[4096];
        for (;;) {
          auto [ec, n] = co_await socket.async_read_some(asio::buffer(buf), nothrow);
          received.append(buf, n);
          if (ec) co_return;
        }
      },
      timeout);
  return received;
}

}  // namespace gistproxy::testing
