// Notices a client that goes away while its request is upstream, without a
// second coroutine. On an HTTP/1.x connection: one cancellable one-byte peek
// on the client socket. On an HTTP/2 stream: the session calls the departure
// when the stream is reset or the connection ends. When the client has left,
// the upstream connection in use is closed too, so every pending upstream
// operation ends at once (the request is cancelled).
#pragma once

#include <boost/asio/cancellation_signal.hpp>
#include <functional>
#include <memory>

#include "proxy/net/beast.hpp"
#include "proxy/net/upstream_pool.hpp"

namespace gistproxy::proxy {

class client_watch {
 public:
  client_watch();
  ~client_watch();  // stops watching
  client_watch(const client_watch&) = delete;
  client_watch& operator=(const client_watch&) = delete;

  // Watches a byte-stream client by peeking at its socket.
  void peek(tcp_socket& client);
  // For a transport that learns of the departure itself: calling the result
  // marks the client gone (and closes the guarded upstream connection); it
  // does nothing once this watch is destroyed.
  std::function<void()> departure();

  // The upstream connection to close if the client leaves (nullptr: none
  // yet). A client that left while the connection was being made (an h2
  // stream reset during the connect) has it closed at once: its request
  // never waits upstream.
  void guard(upstream_connection* c);
  bool client_gone() const { return state_->gone; }

 private:
  struct state {
    bool active = true;
    bool gone = false;
    upstream_connection* upstream = nullptr;
    char peeked = 0;  // the peek's target; owned here because the handler may outlive us
  };
  static void left(state& s);
  std::shared_ptr<state> state_;  // shared with the pending handler, which may outlive us
  asio::cancellation_signal cancel_;
};

}  // namespace gistproxy::proxy
