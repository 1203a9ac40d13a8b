// Shared services, built once in main and handed down: configuration,
// telemetry and upstream targets. Per-thread state lives in `shard`.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <list>
#include <memory>

#include "proxy/runtime/config.hpp"
#include "proxy/aws/aws_signing.hpp"
#include "proxy/live/live_feed.hpp"
#include "proxy/net/http_url.hpp"
#include "proxy/net/listener_tls.hpp"
#include "proxy/net/upstream_pool.hpp"
#include "proxy/net/via_marker.hpp"
#include "proxy/runtime/freed_memory.hpp"
#include "proxy/runtime/store_lanes.hpp"
#include "rewrite/prompt_cache/prefix_tracker.hpp"
#include "rewrite/cost/prices.hpp"
#include "rewrite/dialects/responses/stored_turns.hpp"
#include "rewrite/endpoint_registry.hpp"
#include "rewrite/page_in/churn_tracker.hpp"
#include "rewrite/conversation/conversation_chains.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/turn_memory/turn_memory.hpp"
#include "telemetry/access_log.hpp"
#include "telemetry/metric_catalogue.hpp"
#include "telemetry/tracer.hpp"

namespace gistproxy::proxy {

// One upstream per API family (services::endpoints->families()), the default family first.
struct upstream_target {
  std::string family;
  http_url url;
  std::optional<egress_proxy> via;  // the egress proxy it is reached through, if any
};

struct services {
  const config& cfg;
  telemetry::registry& registry;
  telemetry::metric_catalogue& metrics;
  telemetry::tracer& tracer;
  telemetry::logger& log;
  std::vector<upstream_target> upstreams;
  asio::ssl::context* tls = nullptr;  // set when an upstream is https
  // Every endpoint served: the built-in APIs and the --compatible providers (process_services builds it).
  const rewrite::endpoint_registry* endpoints = &rewrite::endpoint_registry::builtin();
  rewrite::offload_engine* offload = nullptr;  // null with --offload off
  rewrite::blob_store* store = nullptr;        // read_blob answers come from here
  rewrite::churn_tracker* churn = nullptr;
  asio::thread_pool* store_pool = nullptr;     // blocking store work runs here, not on I/O threads
  store_lanes* lanes = nullptr;                // each tenant's share of store_pool (enter_lane before a co_spawn there)
  bool store_is_remote = false;                // s3://: every rewrite that may store runs on the pool
  class recorder* recorder = nullptr;          // --record
  const rewrite::price_table* prices = nullptr; // --prices, or the built-in table
  // Which conversation a turn is (receive.cpp): its opening, credential and prefix chain.
  rewrite::conversation_chains* conversations = nullptr;
  rewrite::prefix_tracker* prefixes = nullptr;  // prompt-cache health: prefix breaks by cause
  rewrite::turn_memory* turns = nullptr;        // each conversation's last turn (--turn-memory; null: off)
  rewrite::stored_turns* stored_turns = nullptr;  // Responses turns whose stored state gistproxy changed
  const aws_signer* aws = nullptr;              // --sign-bedrock: signs credential-less Bedrock requests
  live_feed* live = nullptr;                    // the admin listener's live view (null: off)
  listener_tls* client_tls = nullptr;           // --tls-cert: the client listener speaks TLS (null: cleartext)
  const via_marker via{};                       // this process's Via entry: forwarding-loop detection
  std::atomic<bool> draining{false};
  std::atomic<long> live_connections{0};
};

// What a client session exposes so a drain can close it while it is idle.
struct session_handle {
  tcp_socket* socket = nullptr;
  bool busy = false;
  // Set by a session that ends itself on a drain, busy or not (HTTP/2:
  // GOAWAY, its open streams finish); called instead of closing it, maybe
  // more than once.
  std::function<void()> drain = nullptr;
};

// One I/O thread: its io_context, its upstream pools and its sessions. All
// members are touched only from that thread, so nothing here is locked.
class shard {
 public:
  explicit shard(services& s);
  // Destroys pending coroutines while the pools and session list still exist.
  ~shard();
  asio::io_context& io() { return *io_; }
  bool stopping() const { return stopping_; }
  services& svc() { return services_; }
  deadline_sweeper& deadlines() { return deadlines_; }
  // The pool of the upstream serving this family (routing.cpp chose it);
  // null when that family has no upstream configured.
  upstream_pool* pool_for(std::string_view family);
  std::list<session_handle>& sessions() { return sessions_; }
  // Closes idle client connections and idle upstream connections (drain).
  void close_idle();

 private:
  services& services_;
  deadline_sweeper deadlines_;  // outlives io_: sockets destroyed with it unlink from it
  std::unique_ptr<asio::io_context> io_;
  std::optional<freed_memory_sweeper> sweeper_;  // reset before io_
  bool stopping_ = false;
  std::vector<std::unique_ptr<upstream_pool>> pools_;  // one per services::upstreams entry
  std::list<session_handle> sessions_;
};

}  // namespace gistproxy::proxy
