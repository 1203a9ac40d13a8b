#include "proxy/net/deadlines.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <catch2/catch.hpp>

using namespace gistproxy::proxy;

namespace {

// A connected loopback pair on `io`: the test reads from `a`, nobody writes on `b`.
struct socket_pair {
  asio::io_context& io;
  tcp_socket a, b;
  explicit socket_pair(asio::io_context& ctx) : io(ctx), a(ctx.get_executor()), b(ctx.get_executor()) {
    tcp_acceptor acceptor(io.get_executor(), tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    a.connect(acceptor.local_endpoint());
    acceptor.accept(b);
  }
};

// Runs `io` until `done` or a generous deadline; the tests assert on what
// happened, not on how long it took.
template <class Done>
void run_until(asio::io_context& io, Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

TEST_CASE("a deadline that passes closes the socket and the read ends as a timeout") {
  asio::io_context io(1);
  deadline_sweeper sweeper(std::chrono::milliseconds(10));
  sweeper.start(io.get_executor());
  socket_pair p(io);
  socket_deadline d(sweeper, p.a);
  std::optional<error_code> result;
  char byte;
  auto bounded = d.arm(std::chrono::milliseconds(30));
  CHECK(sweeper.armed() == 1);
  p.a.async_read_some(asio::buffer(&byte, 1), [&](error_code ec, std::size_t) { result = d.verdict(ec); });
  run_until(io, [&] { return result.has_value(); });
  REQUIRE(result);
  CHECK(*result == beast::error::timeout);
  CHECK(d.expired());
  CHECK_FALSE(p.a.is_open());
  CHECK(sweeper.armed() == 0);
  sweeper.stop();
}

TEST_CASE("a disarmed deadline closes nothing, and re-arming moves the deadline") {
  asio::io_context io(1);
  deadline_sweeper sweeper(std::chrono::milliseconds(10));
  sweeper.start(io.get_executor());
  socket_pair p(io);
  socket_deadline d(sweeper, p.a);
  { auto bounded = d.arm(std::chrono::milliseconds(20)); }
  CHECK(sweeper.armed() == 0);
  // A second deadline armed long after: the first one, gone, must not fire.
  d.set(std::chrono::seconds(60));
  std::optional<error_code> result;
  char byte;
  p.a.async_read_some(asio::buffer(&byte, 1), [&](error_code ec, std::size_t) { result = d.verdict(ec); });
  asio::steady_timer later(io, std::chrono::milliseconds(100));
  bool waited = false;
  later.async_wait([&](error_code) {
    waited = true;
    asio::write(p.b, asio::buffer("x", 1));
  });
  run_until(io, [&] { return result.has_value(); });
  CHECK(waited);
  REQUIRE(result);
  CHECK_FALSE(*result);
  CHECK_FALSE(d.expired());
  CHECK(p.a.is_open());
  d.disarm();
  sweeper.stop();
}

TEST_CASE("a deadline destroyed while armed leaves the sweeper's list") {
  asio::io_context io(1);
  deadline_sweeper sweeper(std::chrono::milliseconds(10));
  sweeper.start(io.get_executor());
  socket_pair p(io);
  {
    socket_deadline first(sweeper, p.a), second(sweeper, p.b);
    first.set(std::chrono::milliseconds(5));
    second.set(std::chrono::seconds(60));
    CHECK(sweeper.armed() == 2);
  }
  CHECK(sweeper.armed() == 0);
  io.run_for(std::chrono::milliseconds(50));  // a sweep over an empty list
  CHECK(p.a.is_open());
  sweeper.stop();
}

TEST_CASE("a deadline moved earlier fires at the earlier time, among many far-off ones") {
  asio::io_context io(1);
  deadline_sweeper sweeper(std::chrono::milliseconds(10));
  sweeper.start(io.get_executor());
  socket_pair p(io);
  std::vector<std::unique_ptr<socket_pair>> others;
  std::vector<std::unique_ptr<socket_deadline>> far;
  for (int i = 0; i < 20; ++i) {
    others.push_back(std::make_unique<socket_pair>(io));
    far.push_back(std::make_unique<socket_deadline>(sweeper, others.back()->a));
    far.back()->set(std::chrono::seconds(60));
  }
  socket_deadline d(sweeper, p.a);
  d.set(std::chrono::seconds(60));
  d.set(std::chrono::milliseconds(20));
  run_until(io, [&] { return d.expired(); });
  CHECK(d.expired());
  CHECK_FALSE(p.a.is_open());
  for (auto& o : others) CHECK(o->a.is_open());
  CHECK(sweeper.armed() == 20);
  far.clear();
  CHECK(sweeper.armed() == 0);
  sweeper.stop();
}
