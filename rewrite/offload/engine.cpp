#include "rewrite/offload/engine.hpp"

#include <algorithm>
#include <atomic>
#include <memory>

#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/offload/pass.hpp"
#include "rewrite/text/utf8.hpp"
#include "rewrite/tokens/token_floor.hpp"

namespace gistproxy::rewrite {
namespace {

// The previous turn's memo of the output whose value lay exactly where this
// one's does, when the two bodies share all its bytes.
const output_memo* known_output(const output_reuse& reuse, const tool_output& o) {
  if (!reuse.previous || o.value.end > reuse.same_bytes) return nullptr;
  const auto& prev = *reuse.previous;
  auto it = std::lower_bound(prev.begin(), prev.end(), o.value.begin,
                             [](const output_memo& m, std::size_t b) { return m.value.begin < b; });
  if (it == prev.end() || it->value.begin != o.value.begin || it->value.end != o.value.end || it->image != o.image)
    return nullptr;
  return &*it;
}

}  // namespace

namespace {
// Keyed by tenant too: a hit is faster than a miss, and a tenant must not
// learn by timing that another tenant offloaded the same bytes.
std::string gist_key(std::string_view tenant, const std::string& hash, std::string_view tool_name,
                     const reference_config& ref) {
  std::string key(tenant);
  key += '\0';
  key += hash;
  key += '\0';
  key += tool_name;
  key += '\0';
  key += ref.tool_name;
  return key;
}
}  // namespace

std::shared_ptr<const offload_engine::gist> offload_engine::cached_gist(std::string_view tenant, const std::string& hash,
                                                                         std::string_view tool_name,
                                                                         const reference_config& ref) const {
  const auto key = gist_key(tenant, hash, tool_name, ref);
  std::lock_guard lock(gist_mutex_);
  auto it = gists_.find(key);
  return it == gists_.end() ? nullptr : it->second;
}

std::shared_ptr<const offload_engine::gist> offload_engine::gist_of(std::string_view tenant, std::string_view bytes,
                                                                     const std::string& hash, std::string_view tool_name,
                                                                     const reference_config& ref) const {
  // The reference is a pure function of (bytes, tool name, configuration): a
  // cache keyed by the bytes' hash returns the same text without re-reading
  // them. It holds derived text only, never the blob's bytes.
  if (auto hit = cached_gist(tenant, hash, tool_name, ref)) return hit;
  auto key = gist_key(tenant, hash, tool_name, ref);
  auto g = std::make_shared<gist>();
  g->shape = shape_of(bytes, estimator_);
  g->tool_name = tool_name;
  g->reference = render_reference(bytes, g->shape, tool_name, hash, ref);
  g->reference_tokens = estimator_.estimate(g->reference, content_kind::text);
  json::escape_into(g->escaped, g->reference);
  std::lock_guard lock(gist_mutex_);
  if (gists_.size() >= max_cached_gists) gists_.clear();  // bounded; a miss only costs a re-render
  gists_.emplace(std::move(key), g);
  return g;
}

static std::uint64_t next_engine_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

offload_engine::tool_definition offload_engine::read_blob_definition(const wire_format& d, const std::string& tool_name,
                                                                   bool counted) const {
  // The definition is one of a few texts (per API and tool name) added to
  // most requests: a per-thread memo, so no lock is shared by the I/O threads
  // and a request pays a few comparisons, not a build and a count. The text
  // is shared: a pass keeps it even when the memo is cleared.
  struct entry {
    std::uint64_t engine;
    const wire_format* api;
    std::string tool_name;
    tool_definition definition;
  };
  thread_local std::vector<entry> memo;
  entry* found = nullptr;
  for (auto& e : memo)
    if (e.engine == id_ && e.api == &d && e.tool_name == tool_name) {
      found = &e;
      break;
    }
  if (!found) {
    if (memo.size() >= 32) memo.clear();  // bounded; a miss only rebuilds
    auto text = std::make_shared<const std::string>(d.read_blob_tool(tool_name));
    const auto floor = tokens::bpe_token_floor(*text);
    found = &memo.emplace_back(entry{id_, &d, tool_name, {std::move(text), std::nullopt, floor}});
  }
  auto& def = found->definition;
  if (counted && !def.tokens) def.tokens = estimator_.estimate(*def.text, content_kind::text);
  return def;
}

offload_engine::offload_engine(offload_config cfg, blob_store& store, const token_estimator& estimator,
                               std::function<std::uint64_t()> now_ns)
    : cfg_(std::move(cfg)), id_(next_engine_id()), store_(store), estimator_(estimator), now_ns_(std::move(now_ns)) {
  if (!now_ns_) now_ns_ = [] { return std::uint64_t(0); };
  if (cfg_.budget_tokens && !cfg_.floor_tokens) cfg_.floor_tokens = cfg_.budget_tokens * 6 / 10;
}

bool offload_engine::pass::scan() {
  scan_.text_results_from = cfg_.text_tool_results;
  scan_.previous_items = reuse_.previous_items;
  scan_.same_bytes = reuse_.same_bytes;
  scan_.learn_items = reuse_.learn_items;
  if (!d_.scan(body_, scan_)) return false;
  report_.outputs_seen = scan_.outputs.size();
  report_.tool_name = choose_tool_name();
  ref_cfg_ = cfg_.reference;
  ref_cfg_.tool_name = report_.tool_name;
  cands_.reserve(scan_.outputs.size());
  for (const auto& o : scan_.outputs) {
    candidate c;
    c.out = &o;
    c.known = known_output(reuse_, o);
    cands_.push_back(std::move(c));
  }
  return true;
}

// Our read_blob's name, unless the client declared a tool of that name
// (then the fallback name). A declaration byte-identical to our own
// definition is ours, arriving from another gistproxy: keep its name.
std::string offload_engine::pass::choose_tool_name() {
  for (const auto& name : {cfg_.tool_name, cfg_.fallback_tool_name}) {
    if (!declared(name)) continue;
    const auto ours = d_.read_blob_tool(name);
    for (const auto& r : scan_.tool_ranges)
      if (body_.substr(r.begin, r.size()) == ours) {
        report_.tool_already_ours = true;
        return name;
      }
  }
  return declared(cfg_.tool_name) ? cfg_.fallback_tool_name : cfg_.tool_name;
}

// read_blob's definition for this API and name, looked up once per request.
const std::string& offload_engine::pass::definition() {
  if (!definition_.text) definition_ = e_.read_blob_definition(d_, report_.tool_name, false);
  return *definition_.text;
}

std::uint64_t offload_engine::pass::definition_tokens() {
  if (!definition_.tokens) definition_ = e_.read_blob_definition(d_, report_.tool_name, true);
  return *definition_.tokens;
}

std::uint64_t offload_engine::pass::definition_token_floor() {
  definition();
  return definition_.token_floor;
}

// Whether an output's bytes can be offloaded exactly, decided once: its
// JSON-unescaped text (valid UTF-8) or base64-decoded image. The previous
// turn's answer stands for bytes both turns share.
bool offload_engine::pass::decode(candidate& c) {
  if (c.decoded) return c.exact;
  c.decoded = true;
  if (c.known) {
    c.exact = c.known->exact;
    c.size = c.known->bytes;
    c.hash = c.known->hash;
  } else {
    c.exact = materialize(c);
    c.size = c.bytes.size();
  }
  if (!c.exact) {
    // Text that is not UTF-8 could not be paged back exactly inside the
    // API's JSON: it stays inline, as the client sent it.
    c.bytes.clear();
    ++report_.skipped_lossy;
    c.fate = output_fate::not_exact;
  }
  return c.exact;
}

// The exact bytes, decoded from the body (once).
bool offload_engine::pass::materialize(candidate& c) {
  c.materialized = true;
  bool lossy = false;
  bool ok = c.out->image ? base64_decode(c.out->raw, c.bytes) : json::unescape(c.out->raw, c.bytes, &lossy);
  if (ok && !c.out->image && !text::is_valid_utf8(c.bytes)) lossy = true;
  return ok && !lossy;
}

// The output's gist: the previous turn's for the same bytes (the same
// read_blob name and the same tool), else the engine's cache, else made
// from the bytes.
const std::shared_ptr<const offload_engine::gist>& offload_engine::pass::gist_of(candidate& c) const {
  if (c.gist) return c.gist;
  if (c.known && c.known->gist && c.known->gist_for == ref_cfg_.tool_name &&
      c.known->gist->tool_name == c.out->tool_name)
    return c.gist = c.known->gist;
  const auto& hash = hash_of(c);
  if (auto g = e_.cached_gist(tenant_, hash, c.out->tool_name, ref_cfg_)) return c.gist = std::move(g);
  return c.gist = e_.gist_of(tenant_, content(c), hash, c.out->tool_name, ref_cfg_);
}

rewrite_result offload_engine::rewrite(const wire_format& d, json::document body, std::string_view tenant,
                                       std::optional<double> read_ratio,
                                       std::optional<std::uint64_t> threshold_tokens,
                                       const output_reuse& reuse) const {
  rewrite_result result;
  pass p(*this, d, body, tenant, read_ratio.value_or(d.usual_cache_read_ratio()),
         threshold_tokens.value_or(cfg_.threshold_tokens), reuse, result);
  if (!p.scan()) {
    result.report.outcome = rewrite_outcome::unparsable;
    return result;
  }
  p.choose_by_rules();
  if (cfg_.budget_tokens) {
    p.apply_budget();
  } else {
    if (cfg_.inject == inject_mode::cost) p.apply_cost_model();
    p.apply_age();
    p.keep_read_back_inline();
  }
  p.store_and_replace();
  if (result.report.store_needed) return result;  // run again where the store may block
  p.offer_read_blob();
  p.splice();
  p.report_fates();
  p.learn();
  return result;
}

}  // namespace gistproxy::rewrite
