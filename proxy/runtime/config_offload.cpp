// Offloading and paging options: what is offloaded (threshold, tokenizer,
// tool policies, budget and age-aware modes), when read_blob is offered and
// how pages are read back, prices, the control group and request overrides.

#include "proxy/runtime/config_options.hpp"

#include "rewrite/control_group.hpp"
#include "rewrite/offload/policy.hpp"

namespace gistproxy::proxy {
namespace {

// "LOW-HIGH" tokens (LOW <= HIGH): what --allow-request-overrides takes besides "off".
std::optional<threshold_range> parse_threshold_range(const std::string& v) {
  const auto dash = v.find('-');
  if (dash == std::string::npos) return std::nullopt;
  auto low = whole_number(std::string_view(v).substr(0, dash));
  auto high = whole_number(std::string_view(v).substr(dash + 1));
  if (!low || !high || *low > *high || *high > 100'000'000) return std::nullopt;
  return threshold_range{*low, *high};
}

}  // namespace

std::vector<option> offload_options() {
  return {
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
     "conversation's cost by more than 0.5% (docs/offload.md: the cost model); always: every request that declares tools; "
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
    {"churn-max-read-backs", "N", "an output read back (whole or most) after the model was shown it counts "
                                  "toward a re-reader from its Nth such read-back (a turn re-reading half of what "
                                  "it was shown makes one: its read-backs and new outputs stay inline), and a stray "
                                  "one stays inline after N+1 (default 1; 0: never)",
     [](config& c, const std::string& v) { return set_uint(c.churn_max_read_backs, v, 0, 1000); }},
    {"stream-keepalive", "DURATION", "keep-alive event interval while a streamed page-in hop waits (default 10s; 0: off)",
     [](config& c, const std::string& v) { return set_duration(c.stream_keepalive, v); }},
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
  };
}

}  // namespace gistproxy::proxy
