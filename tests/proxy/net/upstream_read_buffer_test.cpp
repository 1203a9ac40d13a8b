// An upstream connection's read buffer: small while pooled, large only for
// the read of a body that will not fit the small one.
#include <catch2/catch.hpp>

#include "proxy/net/upstream_pool.hpp"

using namespace gistproxy::proxy;

namespace {

struct connection_fixture {
  asio::io_context io{1};
  deadline_sweeper sweeper{std::chrono::milliseconds(10)};
  upstream_connection conn{io.get_executor(), sweeper, nullptr};
  connection_fixture() { conn.buffer.reserve(upstream_connection::small_read_buffer); }
};

}  // namespace

TEST_CASE("an upstream read buffer stays small for a body that fits it") {
  connection_fixture f;
  f.conn.wants_large_reads(upstream_connection::small_read_buffer);
  CHECK(f.conn.buffer.capacity() < upstream_connection::large_read_buffer);
}

TEST_CASE("an upstream read buffer grows for a long body or one of unknown length") {
  connection_fixture f;
  f.conn.wants_large_reads(upstream_connection::small_read_buffer + 1);
  CHECK(f.conn.buffer.capacity() >= upstream_connection::large_read_buffer);
  connection_fixture chunked;
  chunked.conn.wants_large_reads(std::nullopt);
  CHECK(chunked.conn.buffer.capacity() >= upstream_connection::large_read_buffer);
}

TEST_CASE("an upstream read buffer goes back to small when empty and keeps bytes it holds") {
  connection_fixture f;
  f.conn.wants_large_reads(std::nullopt);
  f.conn.shrink_read_buffer();
  CHECK(f.conn.buffer.capacity() >= upstream_connection::small_read_buffer);
  CHECK(f.conn.buffer.capacity() < upstream_connection::large_read_buffer);

  connection_fixture holding;
  holding.conn.wants_large_reads(std::nullopt);
  const auto bytes = asio::buffer_copy(holding.conn.buffer.prepare(5), asio::buffer("extra", 5));
  holding.conn.buffer.commit(bytes);
  holding.conn.shrink_read_buffer();  // bytes past an answer: never dropped here
  CHECK(holding.conn.buffer.size() == 5);
  CHECK(holding.conn.buffer.capacity() >= upstream_connection::large_read_buffer);
}
