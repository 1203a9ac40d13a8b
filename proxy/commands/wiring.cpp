#include "proxy/commands/wiring.hpp"

#include "rewrite/tokens/bpe_tokenizer.hpp"

#include <fstream>

#include <stdexcept>

#include "proxy/net/http_url.hpp"

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
  o.inject = cfg.inject_read_blob == "always" ? rewrite::inject_mode::always : rewrite::inject_mode::when_referenced;
  o.tool_name = cfg.read_blob_name;
  o.fallback_tool_name = cfg.read_blob_fallback_name;
  o.max_blob_bytes = cfg.max_blob_bytes;
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
  std::ifstream in(cfg.prices, std::ios::binary);
  if (!in) throw std::runtime_error("--prices: cannot read " + cfg.prices);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::string error;
  auto table = rewrite::price_table::parse(text, error);
  if (!table) throw std::runtime_error("--prices " + cfg.prices + ": " + error);
  return std::move(*table);
}

std::unique_ptr<rewrite::token_estimator> make_tokenizer(const config& cfg) {
  std::string error;
  auto t = rewrite::tokens::make_token_estimator(cfg.tokenizer, &error);
  if (!t) throw std::runtime_error("--tokenizer " + cfg.tokenizer + ": " + error);
  return t;
}

}  // namespace gistproxy::proxy
