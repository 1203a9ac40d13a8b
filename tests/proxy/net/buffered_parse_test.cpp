#include "proxy/net/buffered_parse.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/string_body.hpp>
#include <catch2/catch.hpp>

#include "proxy/net/checked_parser.hpp"

using gistproxy::proxy::parse_buffered;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

using parser = gistproxy::proxy::checked_request_parser<http::string_body>;

void append(beast::flat_buffer& b, std::string_view bytes) {
  const auto n = boost::asio::buffer_copy(b.prepare(bytes.size()), boost::asio::buffer(bytes.data(), bytes.size()));
  b.commit(n);
}

// Reads the head as the session does (Beast stops at the end of the head),
// leaving what follows it in the buffer.
void read_head(parser& p, beast::flat_buffer& b) {
  p.eager(false);
  beast::error_code ec;
  while (!p.is_header_done()) {
    const auto used = p.put(b.data(), ec);
    b.consume(used);
    REQUIRE((!ec || ec == http::error::need_more));
    REQUIRE(used > 0);
  }
}

}  // namespace

TEST_CASE("a body that came with its head is parsed from the buffer and a pipelined request stays") {
  beast::flat_buffer b;
  append(b, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  append(b, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  parser p;
  read_head(p, b);
  CHECK(parse_buffered(p, b) == beast::error_code{});
  CHECK(p.is_done());
  CHECK(p.get().body() == "hello");
  CHECK(beast::buffers_to_string(b.data()) == "GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
}

TEST_CASE("a body only partly received is taken as far as it goes, without an error") {
  beast::flat_buffer b;
  append(b, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhel");
  parser p;
  read_head(p, b);
  CHECK(parse_buffered(p, b) == beast::error_code{});
  CHECK_FALSE(p.is_done());
  CHECK(b.size() == 0);
  append(b, "lo world");
  CHECK(parse_buffered(p, b) == beast::error_code{});
  CHECK(p.is_done());
  CHECK(p.get().body() == "hello worl");
  CHECK(beast::buffers_to_string(b.data()) == "d");
}

TEST_CASE("a chunked body is parsed chunk by chunk and its errors are the parser's") {
  beast::flat_buffer b;
  append(b, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  parser p;
  read_head(p, b);
  CHECK(parse_buffered(p, b) == beast::error_code{});
  CHECK(p.is_done());
  CHECK(p.get().body() == "abcde");

  beast::flat_buffer bad;
  append(bad, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n");
  parser q;
  read_head(q, bad);
  CHECK(parse_buffered(q, bad) == http::error::bad_chunk);
  CHECK_FALSE(q.is_done());
}

TEST_CASE("a chunked body over the parser's limit ends with body_limit") {
  beast::flat_buffer b;
  append(b, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n0\r\n\r\n");
  parser p;
  p.body_limit(4);
  read_head(p, b);
  CHECK(parse_buffered(p, b) == http::error::body_limit);
}

TEST_CASE("nothing buffered: nothing parsed and no error") {
  beast::flat_buffer b;
  append(b, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n");
  parser p;
  read_head(p, b);
  CHECK(parse_buffered(p, b) == beast::error_code{});
  CHECK_FALSE(p.is_done());
}
