#include "proxy/runtime/config.hpp"

#include "proxy/runtime/config_options.hpp"

#include <charconv>
#include <cmath>
#include "proxy/net/http_url.hpp"
#include "rewrite/endpoint.hpp"
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

// --compatible NAME=PREFIX=URL read alone (names and prefixes given twice
// are found once every source was read: compatible_problem below); why not, or empty.
std::string compatible_error(const std::string& v, rewrite::compatible_provider* out = nullptr) {
  std::string error;
  auto p = rewrite::parse_compatible(v, error);
  if (!p) return error;
  if (!parse_http_url(p->url, error)) return "URL: " + error;
  if (out) *out = std::move(*p);
  return {};
}

// Providers given twice (a name or prefix), by any mix of flags and the config file.
std::optional<std::string> compatible_problem(const config& c) {
  const std::span<const rewrite::compatible_provider> all = c.compatible;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (auto problem = rewrite::compatible_problem(all[i], all.first(i))) return "bad value for --compatible: " + *problem;
  return std::nullopt;
}

const std::vector<option>& options() {
  static const std::vector<option> table = [] {
    std::vector<option> t = {
      {"upstream", "URL", "LLM API base URL, http or https (default https://api.openai.com); the client's path and query are appended",
       [](config& c, const std::string& v) { return c.upstream = v, true; }},
      {"compatible", "NAME=PREFIX=URL",
       "an OpenAI-compatible provider beside OpenAI (repeatable): Chat Completions at PREFIX/chat/completions and "
       "Responses at PREFIX/responses; every request under PREFIX goes to URL with PREFIX replaced by URL's path, and "
       "no other provider's (e.g. groq=/groq/v1=https://api.groq.com/openai/v1; docs/compatible.md)",
       [](config& c, const std::string& v) {
         rewrite::compatible_provider p;
         if (!compatible_error(v, &p).empty()) return false;
         return c.compatible.push_back(std::move(p)), true;
       },
       [](const std::string& v) { return compatible_error(v); }},
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
      {"max-idle-upstream", "N", "idle upstream keep-alive connections kept per thread (default 256)",
       [](config& c, const std::string& v) {
         char* end = nullptr;
         c.max_idle_upstream = unsigned(std::strtoul(v.c_str(), &end, 10));
         return end && *end == 0;
       }},
      {"sign-bedrock", "on|off", "sign Bedrock requests that carry no credentials with gistproxy's own AWS credentials "
                                 "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; default off)",
       [](config& c, const std::string& v) { return set_switch(c.sign_bedrock, v); }},
      {"bedrock-region", "REGION", "the region Bedrock requests are signed for (default: the --bedrock-upstream host's, "
                                   "else AWS_REGION, else us-east-1)",
       [](config& c, const std::string& v) { return c.bedrock_region = v, !v.empty(); }},
    };
    // Grouped by what they configure: listeners first, then the upstreams,
    // telemetry and signing above, the store, then offloading and paging.
    auto listeners = listener_options();
    t.insert(t.begin(), listeners.begin(), listeners.end());
    for (auto group : {store_options(), offload_options()}) t.insert(t.end(), group.begin(), group.end());
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
  for (const auto& p : compatible)
    if (p.name == family) return p.url;
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

std::optional<std::uint64_t> whole_number(std::string_view s) {
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
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
      "A transparent reverse proxy in front of LLM APIs (OpenAI Chat Completions\n"
      "and Responses, Anthropic Messages, Google Gemini; on Azure OpenAI, Vertex AI\n"
      "and Bedrock, with Bedrock's Converse; OpenAI-compatible providers beside\n"
      "OpenAI with --compatible). Clients change only their base URL.\n\n"
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
  if (auto problem = compatible_problem(c)) return {std::nullopt, *problem, 2};
  r.cfg = std::move(c);
  return r;
}

}  // namespace gistproxy::proxy
