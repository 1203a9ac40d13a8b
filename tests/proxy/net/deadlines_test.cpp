#include "proxy/net/deadlines.hpp"

#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

using namespace gistproxy::proxy;

namespace {

// A connected loopback pair on `io`: the test reads from `a`, writes on `b`.
struct socket_pair {
  tcp_socket a, b;
  explicit socket_pair(asio::io_context& io) : a(io.get_executor()), b(io.get_executor()) {
    tcp_acceptor acceptor(io.get_executor(), tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    a.connect(acceptor.local_endpoint());
    acceptor.accept(b);
  }
};

// One shard's worth: an io_context, its sweeper (10 ms ticks) and a socket
// pair whose `a` end has a deadline.
struct shard_fixture {
  asio::io_context io{1};
  deadline_sweeper sweeper{std::chrono::milliseconds(10)};
  socket_pair p{io};
  socket_deadline d{sweeper, p.a};
  std::optional<error_code> read_result;
  char byte = 0;

  shard_fixture() { sweeper.start(io.get_executor()); }
  ~shard_fixture() { sweeper.stop(); }

  void start_read() {
    p.a.async_read_some(asio::buffer(&byte, 1), [this](error_code ec, std::size_t) { read_result = d.verdict(ec); });
  }
  // Runs the loop until `done` or a generous deadline; the tests assert on
  // what happened, not on how long it took.
  template <class Done>
  void run_until(Done done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      io.restart();
      io.run_for(std::chrono::milliseconds(5));
    }
  }
};

}  // namespace

TEST_CASE("a deadline that passes closes the socket and the read ends as a timeout") {
  shard_fixture f;
  auto bounded = f.d.arm(std::chrono::milliseconds(30));
  CHECK(f.sweeper.armed() == 1);
  f.start_read();
  f.run_until([&] { return f.read_result.has_value(); });
  REQUIRE(f.read_result);
  CHECK(*f.read_result == beast::error::timeout);
  CHECK(f.d.expired());
  CHECK_FALSE(f.p.a.is_open());
  CHECK(f.sweeper.armed() == 0);
}

TEST_CASE("a disarmed deadline closes nothing, and re-arming moves the deadline") {
  shard_fixture f;
  { auto bounded = f.d.arm(std::chrono::milliseconds(20)); }
  CHECK(f.sweeper.armed() == 0);
  // A second deadline armed long after: the first one, gone, must not fire.
  f.d.set(std::chrono::seconds(60));
  f.start_read();
  asio::steady_timer later(f.io, std::chrono::milliseconds(100));
  bool waited = false;
  later.async_wait([&](error_code) {
    waited = true;
    asio::write(f.p.b, asio::buffer("x", 1));
  });
  f.run_until([&] { return f.read_result.has_value(); });
  CHECK(waited);
  REQUIRE(f.read_result);
  CHECK_FALSE(*f.read_result);
  CHECK_FALSE(f.d.expired());
  CHECK(f.p.a.is_open());
}

TEST_CASE("a deadline destroyed while armed leaves the sweeper's list") {
  shard_fixture f;
  {
    socket_deadline first(f.sweeper, f.p.b);
    first.set(std::chrono::milliseconds(5));
    f.d.set(std::chrono::seconds(60));
    CHECK(f.sweeper.armed() == 2);
  }
  CHECK(f.sweeper.armed() == 1);
  f.d.disarm();
  CHECK(f.sweeper.armed() == 0);
  f.io.run_for(std::chrono::milliseconds(50));  // sweeps over a list of disarmed deadlines
  CHECK(f.p.a.is_open());
  CHECK(f.p.b.is_open());
}

TEST_CASE("a deadline moved earlier fires at the earlier time, among many far-off ones") {
  shard_fixture f;
  std::vector<std::unique_ptr<socket_pair>> others;
  std::vector<std::unique_ptr<socket_deadline>> far;
  for (int i = 0; i < 20; ++i) {
    others.push_back(std::make_unique<socket_pair>(f.io));
    far.push_back(std::make_unique<socket_deadline>(f.sweeper, others.back()->a));
    far.back()->set(std::chrono::seconds(60));
  }
  f.d.set(std::chrono::seconds(60));
  f.d.set(std::chrono::milliseconds(20));
  f.run_until([&] { return f.d.expired(); });
  CHECK(f.d.expired());
  CHECK_FALSE(f.p.a.is_open());
  for (auto& o : others) CHECK(o->a.is_open());
  CHECK(f.sweeper.armed() == 20);
  far.clear();
  CHECK(f.sweeper.armed() == 0);
}
