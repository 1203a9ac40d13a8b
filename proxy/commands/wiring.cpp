#include "proxy/commands/wiring.hpp"

#include "rewrite/tokens/bpe_tokenizer.hpp"

#include <fstream>

#include <stdexcept>

#include "proxy/commands/input_files.hpp"
#include "proxy/net/http_url.hpp"
#include "proxy/store/cached_blob_store.hpp"
#include "proxy/store/fs_blob_store.hpp"
#include "proxy/store/store_call_trace.hpp"
#include "proxy/store/s3/s3_blob_store.hpp"
#include "telemetry/metric_catalogue.hpp"

namespace gistproxy::proxy {

std::unique_ptr<telemetry::export_pipeline> make_exporters(const config& cfg,
                                                                 telemetry::metric_catalogue& metrics) {
  std::vector<std::unique_ptr<telemetry::span_exporter>> exporters;
  if (!cfg.span_log.empty()) exporters.push_back(std::make_unique<telemetry::span_log_exporter>(cfg.span_log));
  if (!cfg.otlp_endpoint.empty()) {
    std::string error;
    auto url = parse_http_url(cfg.otlp_endpoint, error);
    if (!url) throw std::runtime_error("--otlp-endpoint: " + error);
    if (url->tls)
      throw std::runtime_error("--otlp-endpoint: https is not supported yet; point it at a local collector over http");
    telemetry::otlp_target target;
    target.host = url->host;
    target.port = url->port;
    target.path = url->base_path + "/v1/traces";
    target.resource.service_name = cfg.service_name;
    exporters.push_back(std::make_unique<telemetry::otlp_http_exporter>(std::move(target)));
  }
  if (exporters.empty()) return nullptr;
  return std::make_unique<telemetry::export_pipeline>(std::move(exporters), metrics);
}

rewrite::offload_config offload_config_of(const config& cfg) {
  rewrite::offload_config o;
  o.threshold_tokens = cfg.threshold_tokens;
  o.budget_tokens = cfg.context_budget_tokens;
  o.floor_tokens = cfg.context_floor_tokens;
  o.age = cfg.age;
  o.inject = cfg.inject_read_blob == "always"            ? rewrite::inject_mode::always
             : cfg.inject_read_blob == "when-referenced" ? rewrite::inject_mode::when_referenced
                                                         : rewrite::inject_mode::cost;
  o.tool_name = cfg.read_blob_name;
  o.fallback_tool_name = cfg.read_blob_fallback_name;
  o.max_blob_bytes = cfg.max_blob_bytes;
  o.max_read_backs = cfg.churn_max_read_backs;
  if (cfg.text_tool_results == "cline") o.text_tool_results = rewrite::text_results::cline;
  o.reference.preview_tokens = cfg.preview_tokens;
  o.reference.handle_chars = cfg.handle_chars;
  for (const auto& spec : cfg.tool_policies) {
    auto rule = rewrite::parse_tool_rule(spec);
    if (rule) o.tool_rules[rule->first] = rule->second;
  }
  return o;
}

rewrite::price_table load_prices(const config& cfg) {
  if (cfg.prices.empty()) return rewrite::price_table::defaults();
  // A regular file of bounded size: a directory, a device or a FIFO is named
  // as the flag's error, never a stream library's message.
  std::string error;
  auto text = read_input_file(cfg.prices, std::uint64_t(16) << 20, error);
  if (!text) throw std::runtime_error("--prices " + cfg.prices + ": cannot read it: " + error);
  auto table = rewrite::price_table::parse(*text, error);
  if (!table) throw std::runtime_error("--prices " + cfg.prices + ": " + error);
  return std::move(*table);
}

std::unique_ptr<rewrite::token_estimator> make_tokenizer(const config& cfg) {
  std::string error;
  auto t = rewrite::tokens::make_token_estimator(cfg.tokenizer, &error);
  if (!t) throw std::runtime_error("--tokenizer " + cfg.tokenizer + ": " + error);
  return t;
}

bool is_s3_store(const std::string& store) { return store.rfind("s3://", 0) == 0; }

namespace {

// A span for one slow S3 call, child of the request whose store work made it.
void record_slow_call(telemetry::tracer& tracer, std::string_view op, const store::s3::response& r, double seconds) {
  const auto& parent = store::current_store_call_parent();
  if (!parent.set) return;
  auto s = tracer.start("store_call", telemetry::span_kind::client, parent.trace, parent.span);
  const auto end = tracer.now();
  s.start_unix_nano = end - std::min<std::uint64_t>(end, std::uint64_t(seconds * 1e9));
  s.end_unix_nano = end;
  s.set_text("gistproxy.store.op", op);
  s.set_text("gistproxy.store.result", store::s3::result_name(r));
  s.set("http.response.status_code", std::int64_t(r.status));
  s.set("gistproxy.store.attempts", std::int64_t(r.attempts));
  if (!r.ok() && !r.error.empty()) s.set_text("error.type", r.error.substr(0, 120));
  tracer.end(s);
}

}  // namespace

opened_store open_store(const config& cfg, telemetry::metric_catalogue* metrics, telemetry::tracer* tracer) {
  opened_store out;
  const auto ttl = std::chrono::duration_cast<std::chrono::seconds>(cfg.blob_ttl).count();
  if (!is_s3_store(cfg.store)) {
    if (!cfg.store_cache.empty()) throw std::runtime_error("--store-cache needs an s3:// --store");
    store::fs_store_options so;
    so.root = cfg.store;
    so.zstd_level = cfg.zstd_level;
    so.max_blob_bytes = cfg.max_blob_bytes;
    so.ttl_seconds = ttl;
    so.max_bytes = cfg.store_max_bytes;
    out.blobs = std::make_unique<store::fs_blob_store>(so);
    return out;
  }
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  // A bucket's size is its lifecycle rule's business (README), not a count
  // this process could keep for replicas writing the same bucket.
  if (cfg.store_max_bytes) throw std::runtime_error("--store-max-bytes bounds a directory store, not an s3:// one");
  std::string error;
  auto where = store::s3::parse_location(cfg.store, cfg.s3_endpoint, env, error);
  if (!where) throw std::runtime_error("--store " + cfg.store + ": " + error);
  auto creds = store::s3::credentials_from_env(env, error);
  if (!creds) throw std::runtime_error("--store " + cfg.store + ": " + error);
  store::s3::client_options co;
  co.timeout = cfg.store_timeout;
  co.max_body_bytes = cfg.max_blob_bytes + cfg.max_blob_bytes / 8 + (1 << 20);  // a zstd frame of the largest blob, and lists
  co.extra_ca_file = cfg.upstream_ca;
  std::string egress_error;
  co.egress = egress_route(cfg.egress, where->endpoint.tls, where->host(), where->endpoint.port, egress_error);
  if (!egress_error.empty()) throw std::runtime_error("--store " + cfg.store + ": " + egress_error);
  const double slow = std::chrono::duration<double>(cfg.store_slow_span).count();
  co.observe = [metrics, tracer, slow](std::string_view op, const store::s3::response& r, double seconds) {
    if (metrics) {
      metrics->store_operations.labels({std::string(op), std::string(store::s3::result_name(r))}).inc();
      metrics->store_operation_duration.labels({std::string(op)}).observe(seconds);
    }
    if (tracer && seconds >= slow) record_slow_call(*tracer, op, r, seconds);
  };
  store::s3_store_options so;
  so.zstd_level = cfg.zstd_level;
  so.max_blob_bytes = cfg.max_blob_bytes;
  so.ttl_seconds = ttl;
  so.refresh_after_seconds = store::refresh_interval(ttl, so.refresh_after_seconds);
  auto s3 = std::make_unique<store::s3_blob_store>(std::make_unique<store::s3::client>(*where, *creds, co), so);
  // Wrong credentials or a missing bucket fail loudly now, not on the first
  // offload; a bucket that does not answer yet is only a warning.
  auto problem = s3->check_access();
  if (!problem.empty()) {
    if (problem.rfind("S3 unreachable", 0) == 0) out.warning = "--store " + cfg.store + ": " + problem;
    else throw std::runtime_error("--store " + cfg.store + ": " + problem);
  }
  out.s3 = s3.get();
  out.blobs = std::move(s3);
  if (!cfg.store_cache.empty()) {
    store::fs_store_options local;
    local.root = cfg.store_cache;
    local.zstd_level = cfg.zstd_level;
    local.max_blob_bytes = cfg.max_blob_bytes;
    local.ttl_seconds = std::int64_t(100) * 365 * 86400;  // the cache evicts by its budget, never by age
    local.durable = false;  // the bucket holds every blob; a torn cache file fails its re-hash and is refetched
    store::cache_options co_cache;
    co_cache.max_bytes = cfg.store_cache_bytes;
    co_cache.zstd_level = cfg.zstd_level;
    co_cache.remote_refresh_seconds = store::refresh_interval(ttl, co_cache.remote_refresh_seconds);
    out.blobs = std::make_unique<store::cached_blob_store>(std::move(out.blobs),
                                                           std::make_unique<store::fs_blob_store>(local), co_cache);
  }
  return out;
}

}  // namespace gistproxy::proxy
