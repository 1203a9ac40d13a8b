// Builds the shared pieces every command wires from a config: the span
// exporters (span log, OTLP) and the offload engine's configuration. Used by
// `serve` and `replay`, so a replay runs exactly the pipeline serve runs.
#pragma once

#include <memory>

#include "proxy/runtime/config.hpp"
#include "rewrite/blob/blob_store.hpp"
#include "rewrite/cost/prices.hpp"
#include "rewrite/gist/content_shape.hpp"
#include "rewrite/offload/policy.hpp"
#include "telemetry/exporters.hpp"
#include "telemetry/tracer.hpp"

namespace gistproxy::store {
class s3_blob_store;
}

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

// --store: a directory, or s3://BUCKET/PREFIX (--s3-endpoint, credentials and
// region from the environment). `metrics` (optional) receives the S3 calls.
// Throws with a flag-named message when the store cannot be opened; a bucket
// that refuses the credentials is an error here, an unreachable one is not
// (the proxy fails open until it answers).
struct opened_store {
  std::unique_ptr<rewrite::blob_store> blobs;
  store::s3_blob_store* s3 = nullptr;  // set for s3:// stores
  std::string warning;                 // e.g. the bucket did not answer at startup
};
bool is_s3_store(const std::string& store);
// `tracer` (optional): S3 calls slower than --store-slow-span become
// store_call spans of the request they served.
opened_store open_store(const config& cfg, telemetry::metric_catalogue* metrics, telemetry::tracer* tracer = nullptr);

}  // namespace gistproxy::proxy
