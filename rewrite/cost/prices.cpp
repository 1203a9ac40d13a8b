#include "rewrite/cost/prices.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "rewrite/json/checked.hpp"
#include "rewrite/json/tree.hpp"

namespace gistproxy::rewrite {
namespace {

constexpr std::size_t max_entries = 4096;
constexpr double per_token = 1e-6;  // prices are per million tokens
// No model is priced anywhere near this per million tokens; a larger price is
// a typo or hostile, and would make cost counters +Inf.
constexpr double max_price = 100'000;

// A price field: a finite, non-negative number (absent: nullopt).
std::optional<double> price_field(const nlohmann::json& o, const char* key, std::string& error, const std::string& where) {
  const auto& v = checked::member(o, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > max_price) {
    error = where + ": \"" + key + "\" must be a non-negative number of USD per million tokens, at most 100000";
    return std::nullopt;
  }
  return v.get<double>();
}

double tokens(std::int64_t n) { return n > 0 ? double(n) : 0.0; }

}  // namespace

std::optional<price_table> price_table::parse(std::string_view json_text, std::string& error) {
  auto doc = json::parse_checked(json_text);
  if (!doc.is_object()) return error = "not a JSON object", std::nullopt;
  const auto& models = checked::member(doc, "models");
  if (!models.is_array()) return error = "\"models\" must be an array", std::nullopt;
  if (models.size() > max_entries) return error = "more than 4096 models", std::nullopt;
  price_table t;
  t.date_ = checked::string_at(doc, "date");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto& m = models[i];
    const std::string where = "models[" + std::to_string(i) + "]";
    entry e;
    e.match = checked::string_at(m, "match");
    if (e.match.empty()) return error = where + ": \"match\" must name a model or model prefix", std::nullopt;
    auto input = price_field(m, "input", error, where);
    auto output = price_field(m, "output", error, where);
    auto read = price_field(m, "cache_read", error, where);
    auto write = price_field(m, "cache_write", error, where);
    if (!error.empty()) return std::nullopt;
    if (!input || !output) return error = where + ": \"input\" and \"output\" are required", std::nullopt;
    // Without a cache price, cached tokens are billed as input (no discount, no premium).
    e.price = {*input, read.value_or(*input), write.value_or(*input), *output};
    e.version = read_model_version(e.match);
    t.entries_.push_back(std::move(e));
  }
  t.index_by_first_byte();
  return t;
}

void price_table::index_by_first_byte() {
  by_first_byte_.resize(entries_.size());
  for (std::uint32_t i = 0; i < by_first_byte_.size(); ++i) by_first_byte_[i] = i;
  auto first = [&](std::uint32_t i) { return static_cast<unsigned char>(entries_[i].match[0]); };
  std::stable_sort(by_first_byte_.begin(), by_first_byte_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return first(a) < first(b); });
  group_start_.fill(0);
  for (auto i : by_first_byte_) ++group_start_[first(i) + 1];
  for (std::size_t b = 1; b < group_start_.size(); ++b) group_start_[b] += group_start_[b - 1];
}

std::string_view base_model_name(std::string_view model) {
  // Routing prefixes: "models/gemini-2.5-flash", "litellm_proxy/claude-…", "openai/gpt-4o".
  if (auto slash = model.rfind('/'); slash != std::string_view::npos) model.remove_prefix(slash + 1);
  // Vendor prefixes of cloud catalogues: "us.anthropic.claude-3-5-sonnet-20241022-v2:0".
  for (;;) {
    auto dot = model.find('.');
    if (dot == std::string_view::npos || dot == 0) break;
    bool word = true;
    for (char c : model.substr(0, dot)) word = word && ((c >= 'a' && c <= 'z') || c == '_');
    if (!word) break;  // "gpt-4.1", "gemini-2.5-pro": the dot is part of the version
    model.remove_prefix(dot + 1);
  }
  return model;
}

bool continues(std::string_view model, std::string_view match) {
  if (!model.starts_with(match)) return false;
  auto rest = model.substr(match.size());
  if (rest.empty()) return true;
  // Vertex AI names snapshots with '@' ("claude-sonnet-4-5@20250929").
  if (rest.size() < 2 || (rest[0] != '-' && rest[0] != '@')) return false;
  // A snapshot date ("-20250514", "-2024-08-06") or a variant ("-latest",
  // "-preview"), but not a version: "claude-opus-4-6" is not "claude-opus-4".
  std::size_t digits = 1;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  return digits == 1 || digits - 1 >= 4;
}

const price_table::entry* price_table::exact(std::string_view model) const {
  const entry* best = nullptr;
  const auto group = static_cast<unsigned char>(model[0]);
  for (auto k = group_start_[group]; k < group_start_[group + 1]; ++k) {
    const auto& e = entries_[by_first_byte_[k]];
    if (continues(model, e.match) && (!best || e.match.size() > best->match.size())) best = &e;
  }
  return best;
}

// The family fallback: among entries of the model's family and tier (never
// another tier: "-mini" is not priced as the full model), the highest
// version not above the model's. Never a newer version (a later model may be
// dearer or cheaper, and an older one is the nearest thing that was priced),
// never a dated snapshot entry (it prices one build, not a line).
const price_table::entry* price_table::family_member(std::string_view model) const {
  const auto wanted = read_model_version(model);
  if (!wanted) return nullptr;
  const entry* best = nullptr;
  for (const auto& e : entries_) {
    const auto& v = e.version;
    if (!v || v->snapshot || v->family != wanted->family || v->tier != wanted->tier) continue;
    if (!version_at_most(*v, *wanted)) continue;
    if (!best || !version_at_most(*v, *best->version)) best = &e;  // strictly higher wins; ties keep the first
  }
  return best;
}

std::optional<price_match> price_table::lookup(std::string_view model) const {
  model = base_model_name(model);
  // A client names the model; a name this long is no table's, and reading it is bounded.
  if (model.empty() || model.size() > model_name_limit) return std::nullopt;
  if (const auto* e = exact(model)) return price_match{e->price, e->match, false};
  if (const auto* e = family_member(model)) return price_match{e->price, e->match, true};
  return std::nullopt;
}

std::optional<model_price> price_table::find(std::string_view model) const {
  auto m = lookup(model);
  if (!m) return std::nullopt;
  return m->price;
}

cost_breakdown cost_of(const token_usage& usage, const model_price& price) {
  cost_breakdown c;
  if (usage.cache_read_tokens >= 0) {
    c.input = tokens(usage.uncached_input_tokens()) * price.input * per_token;
    c.cache_read = tokens(usage.cache_read_tokens) * price.cache_read * per_token;
    c.cache_write = tokens(usage.cache_write_tokens) * price.cache_write * per_token;
  } else {
    c.input = tokens(usage.input_tokens) * price.input * per_token;
  }
  c.output = tokens(usage.output_tokens) * price.output * per_token;
  return c;
}

double input_cost(std::uint64_t n, const model_price& price) { return double(n) * price.input * per_token; }

std::optional<double> cache_read_ratio(const model_price& price) {
  const double written = price.cache_write > 0 ? price.cache_write : price.input;
  if (written <= 0) return std::nullopt;
  if (price.cache_read <= 0) return 1.0;
  return std::min(1.0, price.cache_read / written);
}

}  // namespace gistproxy::rewrite
