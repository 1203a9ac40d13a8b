// gistproxy: wires the shared services together and dispatches subcommands.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "proxy/commands/blob_command.hpp"
#include "proxy/commands/report_command.hpp"
#include "proxy/commands/replay_command.hpp"
#include "proxy/commands/wiring.hpp"
#include "proxy/config.hpp"
#include "proxy/store/fs_blob_store.hpp"
#include "rewrite/offload/engine.hpp"
#include "proxy/recorder.hpp"
#include "proxy/net/server.hpp"
#include "telemetry/exporters.hpp"

extern char** environ;

namespace gp = gistproxy;

namespace {

constexpr const char* usage =
    "usage: gistproxy <command> [options]\n\n"
    "commands:\n"
    "  serve      run the proxy (gistproxy serve --help for its options)\n"
    "  blob       read, verify and clean the blob store (gistproxy blob --help)\n"
    "  report     churn, integrity failures and savings from span logs (gistproxy report --help)\n"
    "  replay     what gistproxy would save on recorded traces, offline (gistproxy replay --help)\n"
    "  --version  print the version\n";

int serve(const std::vector<std::string>& args) {
  auto parsed = gp::proxy::parse_serve_args(args, environ);
  if (!parsed.cfg) {
    (parsed.exit_code == 0 ? std::cout : std::cerr) << parsed.message << (parsed.exit_code ? "\n" : "");
    return parsed.exit_code;
  }
  const auto& cfg = *parsed.cfg;
  gp::telemetry::logger log(*gp::telemetry::parse_log_level(cfg.log_level));
  std::shared_ptr<std::function<void()>> gc_holder;
  try {
    // One upstream per API family: --upstream, --anthropic-upstream, ...
    std::vector<gp::proxy::upstream_target> upstreams;
    bool any_tls = false;
    for (const auto& family : gp::rewrite::upstream_families()) {
      std::string error;
      auto url = gp::proxy::parse_http_url(cfg.upstream_for(family.name), error);
      const std::string flag = upstreams.empty() ? "--upstream" : "--" + std::string(family.name) + "-upstream";
      if (!url) throw std::runtime_error(flag + ": " + error);
      any_tls |= url->tls;
      upstreams.push_back({std::string(family.name), std::move(*url)});
    }

    gp::telemetry::registry registry;
    gp::telemetry::metric_catalogue metrics(registry);
    std::vector<std::string_view> apis;
    for (const auto* d : gp::rewrite::all_dialects()) apis.push_back(d->name());
    metrics.initialise_api_series(apis);
    auto pipeline = gp::proxy::make_exporters(cfg, metrics);
    gp::telemetry::system_clock clock;
    gp::telemetry::random_id_generator ids;
    gp::telemetry::tracer tracer(clock, ids, pipeline.get());
    std::unique_ptr<boost::asio::ssl::context> tls;
    if (any_tls) tls = gp::proxy::make_upstream_tls_context(cfg.upstream_ca);

    gp::proxy::services svc{cfg, registry, metrics, tracer, log, std::move(upstreams), tls.get()};

    // Offload: the blob store, the engine, and the pool that does their blocking work.
    boost::asio::thread_pool store_pool(cfg.store_threads);
    std::unique_ptr<gp::store::fs_blob_store> store;
    gp::rewrite::char_ratio_estimator estimator;
    std::unique_ptr<gp::rewrite::offload_engine> engine;
    gp::rewrite::churn_tracker churn;
    if (cfg.offload) {
      gp::store::fs_store_options so;
      so.root = cfg.store;
      so.zstd_level = cfg.zstd_level;
      so.max_blob_bytes = cfg.max_blob_bytes;
      so.ttl_seconds = std::chrono::duration_cast<std::chrono::seconds>(cfg.blob_ttl).count();
      store = std::make_unique<gp::store::fs_blob_store>(so);
      engine = std::make_unique<gp::rewrite::offload_engine>(gp::proxy::offload_config_of(cfg), *store, estimator,
                                                              [&clock] { return clock.now_unix_nano(); });
      svc.offload = engine.get();
      svc.store = store.get();
      svc.churn = &churn;
      svc.store_pool = &store_pool;
      registry.add_callback_gauge("gistproxy_store_objects", "Blobs in the store.",
                                  [s = store.get()] { return double(s->stats().objects); });
      registry.add_callback_gauge("gistproxy_store_bytes", "Bytes the store uses on disk (compressed).",
                                  [s = store.get()] { return double(s->stats().stored_bytes); });
      // Hourly, bounded gc of expired blobs, off the I/O threads.
      auto gc_timer = std::make_shared<boost::asio::steady_timer>(store_pool);
      auto gc = std::make_shared<std::function<void()>>();
      *gc = [gc_timer, gc_weak = std::weak_ptr<std::function<void()>>(gc), s = store.get()] {
        gc_timer->expires_after(std::chrono::hours(1));
        gc_timer->async_wait([gc_weak, s](boost::system::error_code ec) {
          if (ec) return;
          s->gc(10000);
          if (auto again = gc_weak.lock()) (*again)();
        });
      };
      (*gc)();
      gc_holder = gc;
    }
    std::unique_ptr<gp::proxy::recorder> recorder;
    if (!cfg.record.empty()) {
      recorder = std::make_unique<gp::proxy::recorder>(
          gp::proxy::recorder_options{cfg.record, cfg.record_max_bytes, 64ull << 20}, metrics);
      svc.recorder = recorder.get();
    }
    unsigned threads = cfg.threads ? cfg.threads : gp::proxy::available_cores();
    {
      gp::proxy::server srv(svc, threads);
      srv.bind();
      auto ep = srv.listen_endpoint(), admin = srv.admin_endpoint();
      log.log(gp::telemetry::log_level::warn, "listening",
              "\"listen\":\"" + ep.address().to_string() + ":" + std::to_string(ep.port()) + "\",\"admin\":\"" +
                  admin.address().to_string() + ":" + std::to_string(admin.port()) + "\",\"upstream\":\"" +
                  svc.upstreams.front().url.host_header() + "\",\"threads\":" + std::to_string(threads));
      srv.run();
    }
    gc_holder.reset();
    store_pool.stop();
    store_pool.join();
    if (pipeline) pipeline->shutdown();
    log.log(gp::telemetry::log_level::warn, "stopped");
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "gistproxy: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << usage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::cout << "gistproxy " << GISTPROXY_VERSION << "\n";
    return 0;
  }
  std::string command = args[0];
  args.erase(args.begin());
  if (command == "serve") return serve(args);
  if (command == "blob") return gp::proxy::blob_command(args);
  if (command == "report") return gp::proxy::report_command(args);
  if (command == "replay") return gp::proxy::replay_command(args);
  std::cerr << "gistproxy: unknown command '" << command << "'\n" << usage;
  return 2;
}
