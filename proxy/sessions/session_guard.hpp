// The one guard every connection's work runs under. Whatever escapes a
// session, an HTTP/2 stream, its writer or a handler of the event loop (a
// bug, or memory that ran out) ends that connection (or stream) only: it is
// logged — the exception's type, never its message, which may quote request
// bytes — and counted in gistproxy_session_failures_total{transport,where}.
// The process keeps serving every other connection.
#pragma once

#include <exception>
#include <functional>
#include <string_view>

#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

// Logs and counts one failure. `transport`: http1, h2, admin or any (the
// event loop cannot tell whose handler threw); `where`: session, stream,
// writer, callback (one of gistproxy's nghttp2 callbacks threw), event_loop.
void count_session_failure(services& svc, std::string_view transport, std::string_view where,
                           std::exception_ptr failure) noexcept;

// A co_spawn completion handler: a coroutine that ended by an exception is
// counted; one that returned is not.
struct counted_failure {
  services* svc;
  std::string_view transport, where;
  void operator()(std::exception_ptr failure) const noexcept {
    if (failure) count_session_failure(*svc, transport, where, failure);
  }
};

// Runs `io` until it runs out of work or is stopped. An exception that
// leaves a handler (asio lets it out of run(), and the thread would end
// the process) goes to `failed` and run() resumes: asio allows that without
// a restart(); the handler that threw is gone, and with it its connection.
void run_guarded(asio::io_context& io, const std::function<void(std::exception_ptr)>& failed);
// The same, counted and logged as transport "any", where "event_loop".
void run_guarded(services& svc, asio::io_context& io);

}  // namespace gistproxy::proxy
