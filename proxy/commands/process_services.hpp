// Everything a serving process shares, built once from its config:
// upstreams, telemetry, prices, the prompt-cache and turn memories, the live
// feed, the listener's TLS identity, the blob store and offload engine, the
// recorder. `gistproxy serve` runs a server over it; the whole-server fuzz
// target (tests/fuzz/server_fuzz.cpp) drives sessions over the same one, so
// it fuzzes exactly what serve runs.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "proxy/runtime/config.hpp"
#include "proxy/runtime/services.hpp"
#include "telemetry/access_log.hpp"

namespace gistproxy::telemetry {
class export_pipeline;
}

namespace gistproxy::proxy {

class offload_services;
class recorder;

class process_services {
 public:
  // Throws std::runtime_error naming the flag at fault (a bad URL, a file).
  process_services(const config& cfg, telemetry::logger& log);
  ~process_services();
  process_services(const process_services&) = delete;
  process_services& operator=(const process_services&) = delete;

  services& svc() { return *svc_; }
  // After the server stopped: the gc, the store threads, the exporters.
  void stop();

 private:
  struct parts;
  std::unique_ptr<parts> parts_;
  services* svc_ = nullptr;
};

}  // namespace gistproxy::proxy
