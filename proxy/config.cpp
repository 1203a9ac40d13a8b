#include "proxy/config.hpp"

#include "proxy/config_options.hpp"
#include "proxy/exchange/request_controls.hpp"

#include <cmath>
#include "rewrite/control_group.hpp"
#include "rewrite/dialect.hpp"
#include "rewrite/offload/policy.hpp"
#include "telemetry/access_log.hpp"

#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gistproxy::proxy {
namespace {

// --NAME-upstream for every upstream family but the default one (whose flag is --upstream).
void add_family_upstream_options(std::vector<option>& table) {
  auto families = rewrite::upstream_families();
  for (std::size_t i = 1; i < families.size(); ++i) {
    const auto f = families[i];
    std::string help = "base URL for requests of the " + std::string(f.name) + " APIs (default " +
                       (f.default_url.empty() ? std::string("none") : std::string(f.default_url)) +
                       ", or --upstream when that is given)";
    // Listed right after --upstream.
    const auto upstream = std::find_if(table.begin(), table.end(), [](const option& o) { return o.name == "upstream"; });
    table.insert(upstream + std::ptrdiff_t(i),
                 option{std::string(f.name) + "-upstream", "URL", std::move(help),
                        [name = std::string(f.name)](config& c, const std::string& v) {
                          return c.family_upstreams[name] = v, true;
                        }});
  }
}

const std::vector<option>& options() {
  static const std::vector<option> table = [] {
    std::vector<option> t = {
      {"upstream", "URL", "LLM API base URL, http or https (default https://api.openai.com); the client's path and query are appended",
       [](config& c, const std::string& v) { return c.upstream = v, true; }},
      {"egress-proxy", "URL|none",
       "outbound HTTP proxy for upstreams and the S3 store: http://[user:password@]host[:port] (CONNECT tunnels, "
       "TLS end to end); none: connect directly. Default: https_proxy / HTTPS_PROXY for https upstreams, "
       "http_proxy / HTTP_PROXY for http ones; no_proxy / NO_PROXY lists hosts reached directly either way",
       [](config& c, const std::string& v) {
         std::string error;
         if (v != "none" && !parse_egress_proxy(v, error)) return false;
         return c.egress.flag = v, true;
       },
       [](const std::string& v) {
         std::string error;
         parse_egress_proxy(v, error);
         return error;
       }},
      {"upstream-ca", "FILE", "PEM file of an extra CA to trust for upstream TLS (besides the system store)",
       [](config& c, const std::string& v) { return c.upstream_ca = v, true; }},
      {"span-log", "FILE", "append one JSON line per finished span to FILE",
       [](config& c, const std::string& v) { return c.span_log = v, true; }},
      {"otlp-endpoint", "URL", "export spans as OTLP/HTTP JSON to URL/v1/traces (env OTEL_EXPORTER_OTLP_ENDPOINT)",
       [](config& c, const std::string& v) { return c.otlp_endpoint = v, true; }},
      {"record", "FILE", "append one JSON line per exchange (bodies, response, status, timings; never headers) to FILE",
       [](config& c, const std::string& v) { return c.record = v, true; }},
      {"record-max-bytes", "BYTES", "rotate the --record file to FILE.1 past this size (default 1GiB)",
       [](config& c, const std::string& v) { return set_bytes(c.record_max_bytes, v); }},
      {"service-name", "NAME", "service.name of exported spans (env OTEL_SERVICE_NAME; default gistproxy)",
       [](config& c, const std::string& v) { return c.service_name = v, true; }},
      {"log-level", "LEVEL", "debug, info (access log), warn, error or off (default info)",
       [](config& c, const std::string& v) { return c.log_level = v, true; }},
      {"connect-timeout", "DURATION", "upstream connect and TLS handshake (default 10s)",
       [](config& c, const std::string& v) { return set_duration(c.connect_timeout, v); }},
      {"upstream-timeout", "DURATION", "wait for the upstream's response headers, else 504 (default 600s)",
       [](config& c, const std::string& v) { return set_duration(c.upstream_timeout, v); }},
      {"stream-idle-timeout", "DURATION", "longest silence inside a response body (default 300s)",
       [](config& c, const std::string& v) { return set_duration(c.stream_idle_timeout, v); }},
      {"max-idle-upstream", "N", "idle upstream keep-alive connections kept per thread (default 64)",
       [](config& c, const std::string& v) {
         char* end = nullptr;
         c.max_idle_upstream = unsigned(std::strtoul(v.c_str(), &end, 10));
         return end && *end == 0;
       }},
      {"offload", "on|off", "offload oversized tool outputs (default on; off: a plain proxy)",
       [](config& c, const std::string& v) {
         if (v != "on" && v != "off" && v != "true" && v != "false") return false;
         c.offload = v == "on" || v == "true";
         return true;
       }},
      {"store", "DIR|s3://BUCKET/PREFIX", "blob store: a directory (default ./gistproxy-blobs) or an S3 bucket",
       [](config& c, const std::string& v) { return c.store = v, !v.empty(); }},
      {"s3-endpoint", "URL", "S3-compatible endpoint (MinIO, Ceph, R2, ...; path-style); default AWS_ENDPOINT_URL_S3, "
                             "AWS_ENDPOINT_URL, else AWS for AWS_REGION",
       [](config& c, const std::string& v) { return c.s3_endpoint = v, !v.empty(); }},
      {"store-slow-span", "DURATION", "S3 calls at least this slow become store_call spans of their request (default 200ms; 0: all)",
       [](config& c, const std::string& v) { return set_duration(c.store_slow_span, v); }},
      {"store-max-bytes", "BYTES", "bound on the directory store's blob files (default 0: none); past it new "
                                   "offloads stay inline (counted), and gc evicts the least recently kept blobs",
       [](config& c, const std::string& v) { return set_bytes(c.store_max_bytes, v); }},
      {"offload-service-anonymous", "on|off", "let callers without an API key use /v1/offload and /v1/blobs, as one "
                                              "shared tenant (default off: 401)",
       [](config& c, const std::string& v) {
         if (v != "on" && v != "off" && v != "true" && v != "false") return false;
         c.offload_service_anonymous = v == "on" || v == "true";
         return true;
       }},
      {"store-cache", "DIR", "local disk cache of an s3:// store: page-ins read it first (re-hashed), writes go to S3 first",
       [](config& c, const std::string& v) { return c.store_cache = v, !v.empty(); }},
      {"store-cache-bytes", "BYTES", "the cache's budget; least recently used blobs leave first (default 1GiB)",
       [](config& c, const std::string& v) { return set_bytes(c.store_cache_bytes, v); }},
      {"turn-memory", "BYTES", "remember each conversation's last turn so the next one, which re-sends it, reuses "
                               "the work on the bytes both share (default 256MiB; 0 off)",
       [](config& c, const std::string& v) { return set_bytes(c.turn_memory_bytes, v); }},
      {"store-timeout", "DURATION", "longest wait for one S3 store call, retries included; past it the original "
                                    "is forwarded (default 5s)",
       [](config& c, const std::string& v) { return set_duration(c.store_timeout, v) && c.store_timeout.count() > 0; }},
      {"zstd-level", "N", "zstd level for stored blobs (default 3)",
       [](config& c, const std::string& v) { return set_uint(c.zstd_level, v, 1, 19); }},
      {"max-blob-bytes", "BYTES", "larger outputs stay inline, never truncated (default 16MiB)",
       [](config& c, const std::string& v) { return set_bytes(c.max_blob_bytes, v); }},
      {"blob-ttl", "DURATION", "blobs unused this long expire (default 7d; refreshed by use)",
       [](config& c, const std::string& v) { return set_duration(c.blob_ttl, v) && c.blob_ttl.count() > 0; }},
      {"threshold-tokens", "N", "offload tool outputs above N tokens (default 2500)",
       [](config& c, const std::string& v) { return set_uint(c.threshold_tokens, v, 1, 1ull << 40); }},
      {"tokenizer", "o200k|cl100k|estimate", "how tokens are counted: exact BPE (o200k_base, cl100k_base) or "
                                             "characters/4 (default o200k; Anthropic models have no public "
                                             "tokenizer: their counts are approximate)",
       [](config& c, const std::string& v) {
         c.tokenizer = v;
         return v == "o200k" || v == "cl100k" || v == "estimate";
       }},
      {"text-tool-results", "off|cline", "also offload tool results carried as user text: cline = Cline, Roo Code "
                                         "and Kilo Code's `[tool for 'arg'] Result:` blocks (default off)",
       [](config& c, const std::string& v) {
         c.text_tool_results = v;
         return v == "off" || v == "cline";
       }},
      {"preview-tokens", "N", "preview size in a reference (default 1000)",
       [](config& c, const std::string& v) { return set_uint(c.preview_tokens, v, 0, 1ull << 30); }},
      {"context-budget-tokens", "N", "budget mode: over N tokens, offload further outputs oldest first (default off)",
       [](config& c, const std::string& v) { return set_uint(c.context_budget_tokens, v, 0, 1ull << 40); }},
      {"prices", "FILE", "price table for gistproxy_cost_usd_total and saved USD: JSON as docs/prices.json "
                         "(default: that file, built in)",
       [](config& c, const std::string& v) { return c.prices = v, !v.empty(); }},
      {"control-percent", "P", "forward a stable P% of conversations (by trace id) untouched: no offload, no read_blob; "
                               "metrics and spans say group=control or treated (default 0)",
       [](config& c, const std::string& v) {
         auto bp = rewrite::parse_control_percent(v);
         if (bp) c.control_basis_points = *bp;
         return bp.has_value();
       }},
      {"context-floor-tokens", "N", "budget mode: evict down to N tokens (default 60% of the budget)",
       [](config& c, const std::string& v) { return set_uint(c.context_floor_tokens, v, 0, 1ull << 40); }},
      {"age-trigger-tokens", "N", "age-aware offload: past N tokens of conversation, older outputs go down to "
                                  "--age-threshold-tokens, in batches the cost model says pay (default 32000; 0 off)",
       [](config& c, const std::string& v) { return set_uint(c.age.trigger_tokens, v, 0, 1ull << 40); }},
      {"age-gate", "cost|tokens", "age-aware offload: a batch goes when it pays in cache pricing (cost, default) "
                                  "or whenever it saves tokens, once per step (tokens)",
       [](config& c, const std::string& v) {
         c.age.decide = v == "tokens" ? rewrite::age_config::gate::tokens : rewrite::age_config::gate::cost;
         return v == "cost" || v == "tokens";
       }},
      {"age-threshold-tokens", "N", "age-aware offload: the threshold for older outputs (default 500)",
       [](config& c, const std::string& v) { return set_uint(c.age.threshold_tokens, v, 64, 1ull << 40); }},
      {"age-keep-tokens", "N", "age-aware offload: the conversation's last N tokens stay as sent (default 16000)",
       [](config& c, const std::string& v) { return set_uint(c.age.keep_tokens, v, 0, 1ull << 40); }},
      {"age-step-tokens", "N", "age-aware offload: the line moves at most once per N tokens of growth "
                               "(default 16000)",
       [](config& c, const std::string& v) { return set_uint(c.age.step_tokens, v, 1000, 1ull << 40); }},
      {"inject-read-blob", "auto|always|when-referenced",
       "when to offer read_blob: auto (default) where the cost model says offloading pays, never raising a "
       "conversation's cost by more than 0.5% (README: the cost model); always: every request that declares tools; "
       "when-referenced: only requests holding a reference",
       [](config& c, const std::string& v) {
         c.inject_read_blob = v;
         return v == "auto" || v == "always" || v == "when-referenced";
       }},
      {"read-blob-name", "NAME", "the paging tool's name (default read_blob)",
       [](config& c, const std::string& v) { return c.read_blob_name = v, !v.empty(); }},
      {"read-blob-fallback-name", "NAME", "its name when the client already has a read_blob tool",
       [](config& c, const std::string& v) { return c.read_blob_fallback_name = v, !v.empty(); }},
      {"handle-chars", "N", "hex characters of the SHA-256 shown as the handle, 16..64 (default 16)",
       [](config& c, const std::string& v) { return set_uint(c.handle_chars, v, 16, 64); }},
      {"tool-policy", "NAME=never|always|TOKENS", "per-tool rule; repeatable",
       [](config& c, const std::string& v) {
         if (!rewrite::parse_tool_rule(v)) return false;
         c.tool_policies.push_back(v);
         return true;
       }},
      {"page-max-bytes", "BYTES", "largest page read_blob returns at once (default 256KiB)",
       [](config& c, const std::string& v) { return set_bytes(c.page_max_bytes, v); }},
      {"max-page-in-hops", "N", "upstream re-queries for read_blob calls per request (default 4)",
       [](config& c, const std::string& v) { return set_uint(c.max_page_in_hops, v, 0, 32); }},
      {"churn-max-read-backs", "N", "an output the model reads back (whole or most) on more than N turns of its "
                                    "conversation stays inline from then on (default 2; 0: never)",
       [](config& c, const std::string& v) { return set_uint(c.churn_max_read_backs, v, 0, 1000); }},
      {"stream-keepalive", "DURATION", "keep-alive event interval while a streamed page-in hop waits (default 10s; 0: off)",
       [](config& c, const std::string& v) { return set_duration(c.stream_keepalive, v); }},
      {"store-threads", "N", "threads hashing, compressing and writing blobs (default 2)",
       [](config& c, const std::string& v) { return set_uint(c.store_threads, v, 1, 64); }},
      {"model-alias", "NAME=MODEL", "a deployment or inference profile NAME serves MODEL (spans, metrics, prices); repeatable",
       [](config& c, const std::string& v) {
         auto eq = v.find('=');
         if (eq == 0 || eq == std::string::npos || eq + 1 == v.size()) return false;
         c.model_aliases[v.substr(0, eq)] = v.substr(eq + 1);
         return true;
       }},
      {"allow-request-overrides", "off|LOW-HIGH",
       "let a request set its own offload threshold (x-gistproxy-threshold) within LOW-HIGH tokens (default off; "
       "x-gistproxy-bypass is always honoured)",
       [](config& c, const std::string& v) {
         if (v == "off") return c.request_threshold_range.reset(), true;
         c.request_threshold_range = parse_threshold_range(v);
         return c.request_threshold_range.has_value();
       }},
      {"sign-bedrock", "on|off", "sign Bedrock requests that carry no credentials with gistproxy's own AWS credentials "
                                 "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; default off)",
       [](config& c, const std::string& v) {
         if (v != "on" && v != "off" && v != "true" && v != "false") return false;
         c.sign_bedrock = v == "on" || v == "true";
         return true;
       }},
      {"bedrock-region", "REGION", "the region Bedrock requests are signed for (default: the --bedrock-upstream host's, "
                                   "else AWS_REGION, else us-east-1)",
       [](config& c, const std::string& v) { return c.bedrock_region = v, !v.empty(); }},
    };
    auto listeners = listener_options();
    t.insert(t.begin(), listeners.begin(), listeners.end());
    add_family_upstream_options(t);
    return t;
  }();
  return table;
}

const option* find_option(std::string_view name) {
  for (const auto& o : options())
    if (name == o.name) return &o;
  return nullptr;
}

std::string json_scalar_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::string> apply_config_file(config& c, const std::string& path) {
  std::ifstream in(path);
  if (!in) return "cannot read config file '" + path + "'";
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!j.is_object()) return "config file '" + path + "' is not a JSON object";
  for (const auto& [key, value] : j.items()) {
    std::string name = key;
    for (auto& ch : name)
      if (ch == '_') ch = '-';
    const option* o = find_option(name);
    if (!o) return "config file '" + path + "': unknown option '" + key + "' (see gistproxy serve --help)";
    // Repeatable options take a JSON array of values.
    auto values = value.is_array() ? value : nlohmann::json::array({value});
    for (const auto& one : values)
      if (const auto text = json_scalar_text(one); !o->set(c, text))
        return "config file '" + path + "': bad value for '" + key + "': " + (o->explain ? o->explain(text) : text);
  }
  return std::nullopt;
}

const char* env_value(const char* const* environ, const char* name) {
  std::size_t n = std::strlen(name);
  for (auto e = environ; e && *e; ++e)
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return nullptr;
}


}  // namespace

void read_egress_environment(egress_settings& egress, const char* const* environ) {
  auto either = [environ](const char* lower, const char* upper) {
    const char* v = env_value(environ, lower);
    if (!v) v = env_value(environ, upper);
    return std::string(v ? v : "");
  };
  egress.https_proxy = either("https_proxy", "HTTPS_PROXY");
  egress.http_proxy = either("http_proxy", "HTTP_PROXY");
  egress.no_proxy = either("no_proxy", "NO_PROXY");
}

std::string config::upstream_for(std::string_view family) const {
  if (family == rewrite::upstream_families().front().name) return upstream;
  if (auto it = family_upstreams.find(family); it != family_upstreams.end()) return it->second;
  for (const auto& f : rewrite::upstream_families())
    if (f.name == family) return std::string(f.default_url);
  return upstream;
}

std::optional<std::chrono::milliseconds> parse_duration(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  // strtod reads "inf", "nan" and hex floats: a duration is a finite,
  // non-negative decimal number (NaN fails every comparison, so test !(v >= 0)).
  if (end == s.c_str() || !std::isfinite(v) || !(v >= 0) || s.find_first_of("xXpP") != std::string::npos)
    return std::nullopt;
  std::string unit(end);
  double ms;
  if (unit.empty() || unit == "s") ms = v * 1000;
  else if (unit == "ms") ms = v;
  else if (unit == "m") ms = v * 60'000;
  else if (unit == "h") ms = v * 3'600'000;
  else if (unit == "d") ms = v * 86'400'000;
  else return std::nullopt;
  // Ten years is longer than any timeout or retention means; past it the
  // conversion to an integer would overflow (1e16 became a negative TTL).
  constexpr double max_ms = 10.0 * 366 * 86'400'000;
  if (ms > max_ms) return std::nullopt;
  return std::chrono::milliseconds(std::int64_t(ms));
}

std::optional<std::uint64_t> parse_bytes(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || !(v >= 0) || s.find_first_of("xXpP") != std::string::npos)
    return std::nullopt;
  std::string unit(end);
  double mult;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KiB" || unit == "k") mult = 1024;
  else if (unit == "M" || unit == "MiB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB") mult = 1024.0 * 1024 * 1024;
  else if (unit == "KB") mult = 1e3;
  else if (unit == "MB") mult = 1e6;
  else if (unit == "GB") mult = 1e9;
  else return std::nullopt;
  if (v * mult > 0x1p60) return std::nullopt;  // no size means this much; a larger double overflows the integer
  return std::uint64_t(v * mult);
}

std::string serve_help() {
  std::string out =
      "usage: gistproxy serve [--config FILE] [options]\n\n"
      "A transparent reverse proxy in front of LLM APIs (OpenAI Chat Completions,\n"
      "OpenAI Responses, Anthropic Messages, Google Gemini). Clients change only\n"
      "their base URL.\n\n"
      "options (also keys of the --config JSON file, e.g. {\"listen\": \"0.0.0.0:8080\"}):\n"
      "  --config FILE                 read options from a JSON object\n";
  for (const auto& o : options()) {
    std::string left = std::string("  --") + o.name + (o.value_name ? std::string(" ") + o.value_name : "");
    if (left.size() < 32) left.resize(32, ' ');
    else left += "\n" + std::string(32, ' ');
    out += left + o.help + "\n";
  }
  out += "  --help                        this text\n  --version                     print the version\n";
  return out;
}

parse_result parse_serve_args(const std::vector<std::string>& args, const char* const* environ) {
  parse_result r;
  config c;
  bool upstream_given = false;
  // Pass 1: help, version and config file come first, whatever their position.
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") return {std::nullopt, serve_help(), 0};
    if (args[i] == "--version") return {std::nullopt, std::string("gistproxy ") + GISTPROXY_VERSION + "\n", 0};
    if (args[i] == "--config") {
      if (i + 1 >= args.size()) return {std::nullopt, "--config needs a FILE", 2};
      if (auto err = apply_config_file(c, args[i + 1])) return {std::nullopt, *err, 2};
      // Whether the file set --upstream decides the other families' default below.
      std::ifstream in(args[i + 1]);
      auto j = nlohmann::json::parse(in, nullptr, false);
      upstream_given |= j.is_object() && j.contains("upstream");
    }
  }
  if (auto v = env_value(environ, "OTEL_EXPORTER_OTLP_ENDPOINT")) c.otlp_endpoint = v;
  if (auto v = env_value(environ, "OTEL_SERVICE_NAME")) c.service_name = v;
  if (auto v = env_value(environ, "GISTPROXY_ADMIN_TOKEN")) c.admin_token = v;
  read_egress_environment(c.egress, environ);
  // Pass 2: flags.
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a.rfind("--", 0) != 0) return {std::nullopt, "unexpected argument '" + a + "' (see gistproxy serve --help)", 2};
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    if (name == "config") {
      ++i;
      continue;
    }
    const option* o = find_option(name);
    if (!o) return {std::nullopt, "unknown option '--" + name + "' (see gistproxy serve --help)", 2};
    if (!inline_value) {
      if (i + 1 >= args.size()) return {std::nullopt, "--" + name + " needs a value", 2};
      value = args[++i];
    }
    if (!o->set(c, value))
      return {std::nullopt, "bad value for --" + name + ": " + (o->explain ? o->explain(value) : "'" + value + "'"), 2};
    upstream_given |= name == "upstream";
  }
  if (upstream_given)
    for (const auto& f : rewrite::upstream_families())
      if (f.name != rewrite::upstream_families().front().name) c.family_upstreams.try_emplace(std::string(f.name), c.upstream);
  if (!telemetry::parse_log_level(c.log_level)) return {std::nullopt, "bad value for --log-level: '" + c.log_level + "'", 2};
  if (auto problem = listeners_problem(c)) return {std::nullopt, *problem, 2};
  r.cfg = std::move(c);
  return r;
}

}  // namespace gistproxy::proxy
