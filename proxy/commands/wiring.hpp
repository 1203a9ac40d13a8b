// Builds the shared pieces every command wires from a config: the span
// exporters (span log, OTLP) and the offload engine's configuration. Used by
// `serve` and `replay`, so a replay runs exactly the pipeline serve runs.
#pragma once

#include <memory>

#include "proxy/config.hpp"
#include "rewrite/cost/prices.hpp"
#include "rewrite/gist/content_shape.hpp"
#include "rewrite/offload/policy.hpp"
#include "telemetry/exporters.hpp"

namespace gistproxy::proxy {

// nullptr when no exporter is configured; throws with a flag-named message on a bad endpoint.
std::unique_ptr<telemetry::export_pipeline> make_exporters(const config& cfg, telemetry::metric_catalogue& metrics);

rewrite::offload_config offload_config_of(const config& cfg);

// --prices FILE, or the built-in table. Throws with a flag-named message when
// the file does not load: costs from a half-read table would be wrong, not missing.
rewrite::price_table load_prices(const config& cfg);

// --tokenizer: the exact BPE tokenizer (o200k, cl100k) or the characters/4
// estimate. Throws with a flag-named message if it cannot be built.
std::unique_ptr<rewrite::token_estimator> make_tokenizer(const config& cfg);

}  // namespace gistproxy::proxy
