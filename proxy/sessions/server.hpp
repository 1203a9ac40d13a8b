// The running proxy: one shard (io_context + thread) per core, a listener
// that hands accepted connections to shards round-robin, the admin listener,
// and the SIGTERM/SIGINT drain.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "proxy/net/beast.hpp"
#include "proxy/runtime/services.hpp"

namespace gistproxy::proxy {

class server {
 public:
  server(services& svc, unsigned threads);
  ~server();
  // Binds both listeners; throws std::runtime_error with a clear message.
  void bind();
  tcp::endpoint listen_endpoint() const;
  tcp::endpoint admin_endpoint() const;
  // Serves until a signal arrives and in-flight requests have drained.
  void run();

 private:
  awaitable<void> accept_loop();
  void begin_drain();

  services& svc_;
  std::vector<std::unique_ptr<shard>> shards_;
  std::unique_ptr<tcp_acceptor> acceptor_;
  std::unique_ptr<tcp_acceptor> admin_acceptor_;
  std::size_t next_shard_ = 0;
};

// Threads to run: the cores this process may use (taskset-aware).
unsigned available_cores();

}  // namespace gistproxy::proxy
