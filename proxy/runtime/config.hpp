// gistproxy's configuration: one table of options, each settable as a flag
// (--name VALUE), a key of the --config JSON file ("name": value) or, for the
// OpenTelemetry ones, the standard environment variables. Precedence:
// defaults < config file < environment < flags. The egress proxy
// (--egress-proxy, or the environment's *_proxy variables) is egress_settings'.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proxy/net/egress_proxy.hpp"
#include "rewrite/dialects/compatible/compatible_endpoint.hpp"
#include "rewrite/offload/cost_model.hpp"

namespace gistproxy::proxy {

// Offload thresholds a client may ask for per request (x-gistproxy-threshold), in tokens.
struct threshold_range {
  std::uint64_t low = 0, high = 0;
};

struct config {
  std::string listen = "127.0.0.1:8080";
  std::string admin_listen = "127.0.0.1:9464";
  // The live view's (GET /, /api/*) bearer token; required when admin_listen is not loopback.
  std::string admin_token;
  // Host names the live view answers for besides loopback names and admin_listen's host ("*": any).
  std::vector<std::string> admin_allowed_hosts;
  unsigned admin_max_connections = 64;  // a new connection past it closes the least recently active
  // TLS on the client listener (all empty: cleartext): PEM certificate chain,
  // its key, and the CAs client certificates must chain to (empty: none asked).
  std::string tls_cert, tls_key, tls_client_ca;
  // How often the TLS files are looked at for a change (0: only on SIGHUP).
  std::chrono::milliseconds tls_reload_interval{1000};
  // The default upstream family's base URL (requests no endpoint serves go there too).
  std::string upstream = "https://api.openai.com";
  // --NAME-upstream of the other families (anthropic, ...), where given; an
  // explicit --upstream stands in for those not given.
  std::map<std::string, std::string, std::less<>> family_upstreams;
  // --compatible NAME=PREFIX=URL: OpenAI-compatible providers served beside
  // OpenAI, each its own family with URL as its upstream (docs/compatible.md).
  std::vector<rewrite::compatible_provider> compatible;
  std::string upstream_ca;  // PEM file of an extra trusted CA
  // The outbound HTTP proxy for upstreams and the S3 store: --egress-proxy
  // (a URL or none; config key egress_proxy) over the environment's.
  egress_settings egress;
  std::string span_log;
  std::string otlp_endpoint;
  std::string record;  // --record FILE: one JSON line per exchange
  std::string tokenizer = "o200k";  // --tokenizer o200k|cl100k|estimate
  std::string text_tool_results = "off";  // --text-tool-results off|cline
  std::string prices;  // --prices FILE: the price table (default: the built-in docs/prices.json)
  std::uint64_t record_max_bytes = 1ull << 30;
  std::string service_name = "gistproxy";
  std::string log_level = "info";
  unsigned threads = 0;  // 0: one per core available to the process
  std::uint64_t max_body_bytes = 64ull << 20;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds upstream_timeout{600'000};     // until the response headers arrive
  std::chrono::milliseconds stream_idle_timeout{300'000};  // between two reads of a response body
  std::chrono::milliseconds client_timeout{60'000};        // to receive a request once it started
  std::chrono::milliseconds idle_timeout{75'000};          // keep-alive idle client connection
  std::chrono::milliseconds drain_timeout{30'000};
  // A Responses WebSocket's whole life, closed 1001 between two responses
  // (the OpenAI API closes its own at 60 minutes); 0: no bound.
  std::chrono::milliseconds websocket_max_age{3'600'000};
  // Idle keep-alive connections per upstream per thread: above what one HTTP/2
  // client connection may have in flight (100 streams), so a burst of them
  // finds its connections again instead of dialing anew (nginx: keepalive 256).
  unsigned max_idle_upstream = 256;
  // Client connections served at once; 0: decided at start from the
  // descriptor limit (min(4096, limit / 2)), leaving room for upstream
  // connections, store files and the admin listener.
  unsigned max_connections = 0;

  // Offload (rewrite/): which tool outputs leave the window and where they go.
  bool offload = true;
  std::string store = "gistproxy-blobs";  // a directory, or s3://BUCKET/PREFIX
  std::string s3_endpoint;                // --s3-endpoint: S3-compatible server (path-style addressing)
  std::chrono::milliseconds store_timeout{5'000};  // one store call against S3, retries included
  std::chrono::milliseconds store_slow_span{200};  // S3 calls at least this slow become store_call spans
  std::string store_cache;                         // --store-cache: local disk cache of an s3:// store
  std::uint64_t store_cache_bytes = 1ull << 30;
  std::uint64_t store_max_bytes = 0;        // --store-max-bytes: bound on a directory store (0: none)
  bool offload_service_anonymous = false;   // keyless callers of /v1/offload and /v1/blobs (one shared tenant)
  std::uint64_t turn_memory_bytes = 256ull << 20;  // each conversation's last turn, reused by the next (0: off)
  int zstd_level = 3;
  std::uint64_t max_blob_bytes = 16ull << 20;
  std::chrono::milliseconds blob_ttl{7ll * 24 * 3600 * 1000};
  std::uint64_t threshold_tokens = 2500;
  std::uint64_t preview_tokens = 1000;
  std::uint64_t context_budget_tokens = 0;
  std::uint32_t control_basis_points = 0;  // --control-percent, in 1/100 of a percent
  std::uint64_t context_floor_tokens = 0;
  rewrite::age_config age{.trigger_tokens = 32000};  // --age-*: age-aware offload
  std::string inject_read_blob = "auto";  // or always, when-referenced
  std::string read_blob_name = "read_blob";
  std::string read_blob_fallback_name = "gistproxy_read_blob";
  unsigned handle_chars = 16;
  std::vector<std::string> tool_policies;  // NAME=never|always|TOKENS
  std::uint64_t page_max_bytes = 256 * 1024;
  unsigned max_page_in_hops = 4;
  unsigned churn_max_read_backs = 1;  // re-reads of an output before it counts toward a re-reader (0: never)
  std::chrono::milliseconds stream_keepalive{10'000};  // between page-in hops of a stream
  unsigned store_threads = 2;  // threads that hash, compress and write blobs

  // Cloud endpoints.
  std::map<std::string, std::string, std::less<>> model_aliases;  // --model-alias NAME=MODEL
  bool sign_bedrock = false;   // --sign-bedrock: sign credential-less Bedrock requests ourselves

  // --allow-request-overrides LOW-HIGH: x-gistproxy-threshold within it (none: refused).
  std::optional<threshold_range> request_threshold_range;
  std::string bedrock_region;  // --bedrock-region

  // The base URL of an upstream family (rewrite::upstream_families()).
  std::string upstream_for(std::string_view family) const;
};

struct parse_result {
  std::optional<config> cfg;  // nullopt: error (message says why) or --help/--version handled
  std::string message;        // text for stdout (help/version) or stderr (error)
  int exit_code = 0;
};

// The proxy variables of an environment, as curl reads them: https_proxy,
// http_proxy and no_proxy, each before its uppercase form (a variable set,
// even empty, wins over its other case). Leaves `flag` alone.
void read_egress_environment(egress_settings& egress, const char* const* environ);

// Parses `serve` arguments (argv without the program and subcommand names).
parse_result parse_serve_args(const std::vector<std::string>& args, const char* const* environ);
std::string serve_help();

// "30s", "250ms", "5m", "2h", "7d" or plain seconds.
std::optional<std::chrono::milliseconds> parse_duration(const std::string& s);
// "64MiB", "16M", "1024", "2GiB".
std::optional<std::uint64_t> parse_bytes(const std::string& s);
// Decimal digits only (no sign, space or suffix) that fit 64 bits: flag values
// and the x-gistproxy-threshold header read numbers the same way.
std::optional<std::uint64_t> whole_number(std::string_view s);

}  // namespace gistproxy::proxy
