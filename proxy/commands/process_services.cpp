#include "proxy/commands/process_services.hpp"

#include <boost/asio/steady_timer.hpp>
#include <cstdlib>
#include <functional>

#include "proxy/commands/wiring.hpp"
#include "proxy/runtime/recorder.hpp"
#include "proxy/store/s3/s3_client.hpp"
#include "rewrite/dialects/bedrock/bedrock_messages.hpp"
#include "rewrite/offload/engine.hpp"
#include "telemetry/exporters.hpp"

namespace gistproxy::proxy {
namespace {

// One upstream per API family: --upstream, --anthropic-upstream, --gemini-upstream, ...
// and each --compatible provider's URL, each with the egress proxy it is
// reached through, if any.
std::vector<upstream_target> upstream_targets(const config& cfg, const rewrite::endpoint_registry& endpoints,
                                              bool& any_tls) {
  std::vector<upstream_target> out;
  for (const auto* f : endpoints.families()) {
    const auto& family = *f;
    std::string error;
    const auto configured = cfg.upstream_for(family.name);
    // A cloud family has no default host (its region or resource is the
    // operator's): without its flag, its requests get a 502 naming it.
    if (configured.empty() && !out.empty()) continue;
    auto url = parse_http_url(configured, error);
    const std::string flag = out.empty()                      ? "--upstream"
                             : family.local_prefix.empty() ? "--" + std::string(family.name) + "-upstream"
                                                           : "--compatible " + std::string(family.name);
    if (!url) throw std::runtime_error(flag + ": " + error);
    auto via = egress_route(cfg.egress, url->tls, url->host, url->port, error);
    if (!error.empty()) throw std::runtime_error(error);
    any_tls |= url->tls;
    out.push_back({std::string(family.name), std::move(*url), std::move(via)});
  }
  return out;
}

// --sign-bedrock: gistproxy's own AWS credentials, for the region of the
// Bedrock upstream. Refuses to start without credentials: an operator who
// asked for signing must not find out from AWS's 403s.
std::unique_ptr<aws_signer> make_aws_signer(const config& cfg, const std::vector<upstream_target>& upstreams) {
  if (!cfg.sign_bedrock) return nullptr;
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v && *v ? std::optional<std::string>(v) : std::nullopt;
  };
  std::string error;
  auto creds = store::s3::credentials_from_env(env, error);
  if (!creds) throw std::runtime_error("--sign-bedrock needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment");
  std::string region = cfg.bedrock_region;
  for (const auto& u : upstreams)
    if (region.empty() && u.family == rewrite::bedrock_family().name)
      region = region_of_aws_host(u.url.host);
  if (region.empty()) region = env("AWS_REGION").value_or(env("AWS_DEFAULT_REGION").value_or("us-east-1"));
  return std::make_unique<aws_signer>(std::move(*creds), std::move(region));
}

// The blob store, the offload engine, and their hourly gc; nothing with --offload off.
class offload_services_impl {
 public:
  offload_services_impl(const config& cfg, services& svc, asio::thread_pool& store_pool, telemetry::clock& clock) {
    if (!cfg.offload) return;
    auto opened = open_store(cfg, &svc.metrics, &svc.tracer);
    if (!opened.warning.empty()) svc.log.log(telemetry::log_level::warn, opened.warning + " (offloads forward the originals until it answers)");
    store_ = std::move(opened.blobs);
    svc.store_is_remote = opened.s3 != nullptr;
    estimator_ = make_tokenizer(cfg);
    engine_ = std::make_unique<rewrite::offload_engine>(offload_config_of(cfg), *store_, *estimator_,
                                                         [&clock] { return clock.now_unix_nano(); });
    svc.offload = engine_.get();
    svc.store = store_.get();
    svc.churn = &churn_;
    svc.store_pool = &store_pool;
    svc.registry.add_callback_gauge("gistproxy_store_objects", "Blobs in the store.",
                                    [s = store_.get()] { return double(s->stats().objects); });
    svc.registry.add_callback_gauge("gistproxy_store_bytes", "Bytes the store uses on disk (compressed).",
                                    [s = store_.get()] { return double(s->stats().stored_bytes); });
    if (!svc.store_is_remote) start_gc(store_pool);  // S3: retention is the bucket's lifecycle rule (README)
  }
  void stop_gc() { gc_.reset(); }

 private:
  // Hourly, bounded gc of expired blobs, off the I/O threads; looked at
  // each minute, so a store near --store-max-bytes evicts without waiting
  // an hour while new offloads stay inline.
  void start_gc(asio::thread_pool& store_pool) {
    auto timer = std::make_shared<asio::steady_timer>(store_pool);
    gc_ = std::make_shared<std::function<void()>>();
    auto minutes = std::make_shared<int>(0);  // since the last gc; only this chain of waits touches it
    *gc_ = [timer, weak = std::weak_ptr<std::function<void()>>(gc_), s = store_.get(), minutes] {
      timer->expires_after(std::chrono::minutes(1));
      timer->async_wait([weak, s, minutes](error_code ec) {
        if (ec) return;
        if (++*minutes >= 60 || s->wants_gc()) {
          *minutes = 0;
          s->gc(10000);
        }
        if (auto again = weak.lock()) (*again)();
      });
    };
    (*gc_)();
  }

  std::unique_ptr<rewrite::blob_store> store_;
  std::unique_ptr<rewrite::token_estimator> estimator_;
  std::unique_ptr<rewrite::offload_engine> engine_;
  rewrite::churn_tracker churn_;
  std::shared_ptr<std::function<void()>> gc_;
};

}  // namespace

// In the order they are built; destroyed in reverse, the services last
// among what uses them.
struct process_services::parts {
  parts(const config& cfg, telemetry::logger& log)
      : endpoints(cfg.compatible), upstreams(upstream_targets(cfg, endpoints, any_tls)), metrics(registry),
        pipeline(with_apis(cfg, endpoints, metrics)),
        tracer(clock, ids, pipeline.get()), tls(any_tls ? make_upstream_tls_context(cfg.upstream_ca) : nullptr),
        signer(make_aws_signer(cfg, upstreams)),
        svc{cfg, registry, metrics, tracer, log, std::move(upstreams), tls.get()},
        prices(load_prices(cfg)), turns({std::size_t(cfg.turn_memory_bytes), 64}),
        live(metrics, [this] { return clock.now_unix_nano() / 1'000'000; }),
        // throws, saying which file is wrong, before anything listens
        client_tls(cfg.tls_cert.empty() ? nullptr
                                        : std::make_unique<listener_tls>(tls_files{cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca})),
        store_pool(cfg.store_threads),  // blocking store work runs here, not on I/O threads
        // Half the store threads at most for any one tenant: the rest stay free for the others.
        lanes(std::max(1u, cfg.store_threads / 2)), offload(cfg, svc, store_pool, clock) {
    svc.endpoints = &endpoints;
    svc.aws = signer.get();
    svc.prices = &prices;
    svc.prefixes = &prefixes;
    svc.conversations = &conversations;
    if (cfg.turn_memory_bytes) svc.turns = &turns;
    svc.stored_turns = &stored_turns;
    svc.live = &live;
    svc.client_tls = client_tls.get();
    svc.lanes = &lanes;
    if (!cfg.record.empty()) {
      rec = std::make_unique<recorder>(recorder_options{cfg.record, cfg.record_max_bytes, 64ull << 20}, metrics);
      svc.recorder = rec.get();
    }
  }
  static std::unique_ptr<telemetry::export_pipeline> with_apis(const config& cfg, const rewrite::endpoint_registry& endpoints,
                                                              telemetry::metric_catalogue& m) {
    std::vector<std::string_view> apis;
    for (const auto* d : endpoints.endpoints()) apis.push_back(d->name());
    m.initialise_api_series(apis);
    return make_exporters(cfg, m);
  }

  bool any_tls = false;
  rewrite::endpoint_registry endpoints;  // the built-in APIs and --compatible providers
  std::vector<upstream_target> upstreams;
  telemetry::registry registry;
  telemetry::metric_catalogue metrics;
  std::unique_ptr<telemetry::export_pipeline> pipeline;
  telemetry::system_clock clock;
  telemetry::random_id_generator ids;
  telemetry::tracer tracer;
  std::unique_ptr<asio::ssl::context> tls;
  std::unique_ptr<aws_signer> signer;
  services svc;
  rewrite::price_table prices;
  rewrite::prefix_tracker prefixes;
  rewrite::conversation_chains conversations;
  rewrite::turn_memory turns;
  rewrite::stored_turns stored_turns{{}};  // the Responses turns whose stored state gistproxy maps
  live_feed live;
  std::unique_ptr<listener_tls> client_tls;
  asio::thread_pool store_pool;
  store_lanes lanes;
  offload_services_impl offload;
  std::unique_ptr<recorder> rec;
};

process_services::process_services(const config& cfg, telemetry::logger& log)
    : parts_(std::make_unique<parts>(cfg, log)), svc_(&parts_->svc) {}

process_services::~process_services() { stop(); }

void process_services::stop() {
  if (!parts_) return;
  parts_->offload.stop_gc();
  parts_->store_pool.stop();
  parts_->store_pool.join();
  if (parts_->pipeline) parts_->pipeline->shutdown();
  parts_->pipeline.reset();
}

}  // namespace gistproxy::proxy
