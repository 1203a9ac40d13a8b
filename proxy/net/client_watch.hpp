// Notices a client that goes away while its request is upstream, without a
// second coroutine: one cancellable one-byte peek on the client socket.
// When the peer has closed, the upstream connection in use is closed too, so
// every pending upstream operation ends at once (the request is cancelled).
#pragma once

#include <boost/asio/cancellation_signal.hpp>
#include <memory>

#include "proxy/net/beast.hpp"
#include "proxy/net/upstream_pool.hpp"

namespace gistproxy::proxy {

class client_watch {
 public:
  explicit client_watch(tcp_socket& client);
  ~client_watch();  // stops watching
  client_watch(const client_watch&) = delete;
  client_watch& operator=(const client_watch&) = delete;

  // The upstream connection to close if the client leaves (nullptr: none yet).
  void guard(upstream_connection* c) { state_->upstream = c; }
  bool client_gone() const { return state_->gone; }

 private:
  struct state {
    bool active = true;
    bool gone = false;
    upstream_connection* upstream = nullptr;
    char peeked = 0;  // the peek's target; owned here because the handler may outlive us
  };
  void arm();
  tcp_socket& client_;
  std::shared_ptr<state> state_;  // shared with the pending handler, which may outlive us
  asio::cancellation_signal cancel_;
};

}  // namespace gistproxy::proxy
