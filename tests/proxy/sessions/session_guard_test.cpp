// The session guard (proxy/sessions/session_guard.hpp): an exception that
// leaves a handler of the event loop, or a connection's coroutine, is told
// to the guard and the loop serves on.
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <stdexcept>

#include "proxy/sessions/session_guard.hpp"

using namespace gistproxy::proxy;

TEST_CASE("an exception out of one handler is told to the guard and the event loop runs the others") {
  asio::io_context io;
  int failures = 0, served = 0;
  asio::post(io, [] { throw std::length_error("field value too large"); });  // Beast's, from inside a read
  asio::post(io, [&] { ++served; });
  asio::post(io, [] { throw std::bad_alloc(); });
  asio::post(io, [&] { ++served; });
  run_guarded(io, [&](std::exception_ptr e) {
    CHECK(e);
    ++failures;
  });
  CHECK(failures == 2);
  CHECK(served == 2);
}

TEST_CASE("a connection's coroutine that throws is counted by its completion handler, not let out") {
  asio::io_context io;
  int told = 0;
  auto failing = []() -> asio::awaitable<void> {
    throw std::runtime_error("bug");
    co_return;
  };
  auto fine = []() -> asio::awaitable<void> { co_return; };
  auto handler = [&](std::exception_ptr e) {
    if (e) ++told;
  };
  asio::co_spawn(io, failing(), handler);
  asio::co_spawn(io, fine(), handler);
  int escaped = 0;
  run_guarded(io, [&](std::exception_ptr) { ++escaped; });
  CHECK(told == 1);
  CHECK(escaped == 0);
}
