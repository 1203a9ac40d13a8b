#include "rewrite/offload/engine.hpp"

#include <algorithm>
#include <atomic>
#include <memory>

#include "rewrite/blob/digest.hpp"
#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/base64.hpp"
#include "rewrite/text/utf8.hpp"

namespace gistproxy::rewrite {
namespace {

// What replaces the bytes at `at`: `owned`, or a gist's escaped reference
// (`shared`, in quotes unless `bare`), which is not copied until the splice.
using edit = splice_edit;

struct candidate {
  const tool_output* out = nullptr;
  std::shared_ptr<const offload_gist> gist;  // once looked up
  const output_memo* known = nullptr;  // the previous turn's answers for these same bytes
  std::string bytes;                   // the decoded bytes, once materialized
  std::uint64_t size = 0;              // decoded size, once decoded (or known)
  bool decoded = false;
  bool exact = false;
  bool materialized = false;
  bool chosen = false;
  std::shared_ptr<const std::string> hash;  // computed once, when needed (or the previous turn's)
  output_fate fate = output_fate::below_threshold;
  std::uint64_t kept_ns = 0;  // when the store confirmed holding it (output_memo::kept_ns)
};

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

// Tokens the rest of the request costs, roughly: bytes/4.
std::uint64_t rough_tokens(std::size_t bytes) { return (bytes + 3) / 4; }

// What offloading an output saves, roughly: its tokens less its reference
// (a preview of at most a quarter of it, plus about 80 tokens of framing).
std::uint64_t rough_saving(std::size_t raw_bytes, std::uint64_t preview_tokens) {
  auto t = rough_tokens(raw_bytes);
  auto after = std::min<std::uint64_t>(preview_tokens, t / 4) + 80;
  return t > after ? t - after : 0;
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

std::uint64_t offload_engine::definition_tokens(const dialect& d, const std::string& tool_name,
                                               const std::string& definition) const {
  // The definition is one of a few texts (per API and tool name) added to
  // most requests: a per-thread memo, so no lock is shared by the I/O threads
  // and a request pays a few comparisons, not a count.
  struct entry {
    std::uint64_t engine;
    const dialect* api;
    std::string tool_name;
    std::uint64_t tokens;
  };
  thread_local std::vector<entry> memo;
  for (const auto& e : memo)
    if (e.engine == id_ && e.api == &d && e.tool_name == tool_name) return e.tokens;
  if (memo.size() >= 32) memo.clear();  // bounded; a miss only recounts
  auto tokens = estimator_.estimate(definition, content_kind::text);
  memo.push_back({id_, &d, tool_name, tokens});
  return tokens;
}

offload_engine::offload_engine(offload_config cfg, blob_store& store, const token_estimator& estimator,
                               std::function<std::uint64_t()> now_ns)
    : cfg_(std::move(cfg)), id_(next_engine_id()), store_(store), estimator_(estimator), now_ns_(std::move(now_ns)) {
  if (!now_ns_) now_ns_ = [] { return std::uint64_t(0); };
  if (cfg_.budget_tokens && !cfg_.floor_tokens) cfg_.floor_tokens = cfg_.budget_tokens * 6 / 10;
}

// One request's rewrite: scan → choose (threshold, per-tool rules, budget) →
// store and build references → offer read_blob → splice. Each step is one
// method; `rewrite` below runs them in order.
class offload_engine::pass {
 public:
  pass(const offload_engine& e, const dialect& d, std::string_view body, std::string_view tenant, double read_ratio,
       std::uint64_t threshold_tokens, const output_reuse& reuse, rewrite_result& out)
      : e_(e), cfg_(e.cfg_), d_(d), body_(body), tenant_(tenant), read_ratio_(read_ratio),
        threshold_tokens_(threshold_tokens), reuse_(reuse), result_(out), report_(out.report) {}

  bool scan() {
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

  // 1. Threshold and per-tool rules. The escaped size bounds the decoded
  //    size, and the tokenizer bounds tokens by bytes (one per byte for BPE),
  //    so small outputs are skipped without decoding or counting them.
  void choose_by_rules() {
    for (auto& c : cands_) {
      auto rule = rule_of(*c.out);
      if (rule.what == tool_rule::action::never) {
        c.fate = output_fate::excluded_by_policy;
        continue;
      }
      // Images cost tokens by their pixels, not their bytes: always offloaded.
      if (c.out->image) {
        c.chosen = decode(c);
        continue;
      }
      if ((c.out->raw.starts_with("[gistproxy: ") || c.out->raw.starts_with("[image: ")) && decode(c) && is_reference(content(c))) {
        c.fate = output_fate::already_reference;  // whatever the threshold: never a reference to a reference
        continue;
      }
      if (c.out->raw.size() < cfg_.min_offload_bytes) continue;
      if (rule.what == tool_rule::action::threshold && e_.estimator_.max_tokens(c.out->raw.size()) <= rule.tokens)
        continue;
      if (!decode(c) || c.size < cfg_.min_offload_bytes) continue;
      if (c.size > cfg_.max_blob_bytes) {
        // The store would refuse it: never tokenized (60 MB took 28 s and 2 GB).
        ++report_.skipped_too_large;
        c.fate = output_fate::too_large;
        continue;
      }
      if (rule.what == tool_rule::action::always || gist_of(c)->shape.tokens > rule.tokens) c.chosen = true;
    }
  }

  // 2. Budget mode: outputs offloaded on an earlier turn stay offloaded (their
  //    bytes are in the store), then the oldest go until the request fits the floor.
  void apply_budget() {
    const std::uint64_t total = rough_tokens(body_.size());
    const auto preview = cfg_.reference.preview_tokens;
    std::uint64_t saved = 0;
    auto choose = [&](candidate& c) {
      c.chosen = true;
      saved += rough_saving(c.out->raw.size(), preview);
    };
    for (auto& c : cands_)
      if (c.chosen) saved += rough_saving(c.out->raw.size(), preview);
    for (auto& c : cands_)
      if (budget_eligible(c) && decode(c) && e_.store_.contains(tenant_, hash_of(c))) choose(c);
    if (total - std::min(total, saved) <= cfg_.budget_tokens) return;
    for (auto& c : cands_) {
      if (total - std::min(total, saved) <= cfg_.floor_tokens) break;
      if (budget_eligible(c) && decode(c)) {
        choose(c);
        ++report_.budget_evictions;
      }
    }
  }

  // 2b. --inject-read-blob=auto: offer read_blob (and offload) only where the
  //     cost model says it pays in this conversation (cost_model.hpp).
  void apply_cost_model() {
    if (report_.tool_already_ours) {  // offered already (another gistproxy): the prefix has it
      report_.offer_reason = "already_offered";
      offer_ = true;
      return;
    }
    const auto head = stable_head_bytes(body_.size(), scan_.conversation, scan_.second_item_begin);
    const auto definition_tokens = e_.definition_tokens(d_, report_.tool_name, definition());
    std::vector<offload_point> points;
    std::vector<const candidate*> paying;  // the candidate behind each point
    for (auto& c : cands_) {
      if (!c.chosen) continue;
      paying.push_back(&c);
      std::uint64_t saving = rough_saving(c.out->raw.size(), cfg_.reference.preview_tokens);
      if (!c.out->image) {
        auto g = gist_of(c);
        saving = g->shape.tokens > g->reference_tokens ? g->shape.tokens - g->reference_tokens : 0;
      }
      points.push_back({rough_tokens(c.out->value.begin), saving});
    }
    auto decision = decide_offer(cfg_.cost_model, rough_tokens(head), definition_tokens, read_ratio_, points);
    report_.offer_reason = decision.reason == offer_decision::why::head          ? "head"
                           : decision.reason == offer_decision::why::output_pays ? "output_pays"
                                                                                 : "not_worth";
    offer_ = decision.offer();
    // read_blob arrives on the turn its paying output is the newest one: a
    // break then is the plan; on a later turn it would not be.
    report_.offer_arrives = decision.reason == offer_decision::why::output_pays && !cands_.empty() &&
                            paying[decision.first_paying] == &cands_.back();
    if (!offer_ && reuse_.conversation && reuse_.conversation->offered) {  // it stays: the prefix holds it
      offer_ = true;
      report_.offer_reason = "offered_before";
    }
    if (!offer_ && carries_followable_reference()) {
      offer_ = true;
      report_.offer_reason = "reference_resolves";
    }
    if (offer_) return;
    for (auto& c : cands_)
      if (c.chosen) {
        c.chosen = false;
        c.fate = output_fate::not_worth_it;
      }
  }

  // A reference already in the request (from /v1/offload, another replica,
  // a model quoting one) that the tenant's store resolves: without read_blob
  // on offer it could never be followed. A few are looked at, each a store
  // lookup; a pass that may not block asks to be run where it may.
  bool carries_followable_reference() {
    if (!followable_) followable_ = find_followable_reference();
    return *followable_;
  }
  bool find_followable_reference() {
    constexpr int max_lookups = 8;
    int looked = 0;
    for (auto& c : cands_) {
      if (c.fate != output_fate::already_reference || looked == max_lookups) continue;
      const auto handle = reference_handle(content(c));
      if (handle.empty()) continue;
      if (!reuse_.may_store) {
        report_.store_needed = true;
        return false;
      }
      ++looked;
      if (e_.store_.get(tenant_, handle).error == blob_error::none) return true;
    }
    return false;
  }

  // 2c. Age-aware offload: past the trigger, older outputs go down to the
  //     age threshold, below a watermark the cost model moves batch by batch
  //     (cost_model.hpp: age_watermark). Only where read_blob is on offer
  //     already: its arrival would rewrite the whole prefix. Every input is
  //     the output's raw size and place, so each turn decides the same way.
  void apply_age() {
    const auto& age = cfg_.age;
    const bool offered = cfg_.inject == inject_mode::always || (cfg_.inject == inject_mode::cost && offer_);
    // Not on offer yet under the cost model: the first batch may bring it, if it pays for that too.
    const bool may_bring = cfg_.inject == inject_mode::cost && !offer_ && !report_.tool_already_ours;
    // Sizes are offsets in the body up to the conversation list's end: what
    // follows it (Chat's tools after the messages, say) is not conversation.
    const auto size = rough_tokens(scan_.conversation ? scan_.conversation->end : body_.size());
    if (!age.trigger_tokens || !(offered || may_bring) || size < age.trigger_tokens) return;
    // Every output is a turn of the agent (the cost model's horizon); only
    // the eligible ones carry a saving.
    std::vector<candidate*> outputs;
    for (auto& c : cands_) outputs.push_back(&c);
    std::sort(outputs.begin(), outputs.end(),
              [](const candidate* a, const candidate* b) { return a->out->value.begin < b->out->value.begin; });
    std::vector<aged_output> points;
    points.reserve(outputs.size());
    for (const auto* c : outputs)
      points.push_back({rough_tokens(c->out->value.begin), rough_tokens(c->out->value.end),
                        age_eligible(*c) ? rough_saving(c->out->raw.size(), cfg_.reference.preview_tokens) : 0,
                        c->chosen ? rough_saving(c->out->raw.size(), cfg_.reference.preview_tokens) : 0});
    const auto arrival = may_bring ? e_.definition_tokens(d_, report_.tool_name, definition()) : 0;
    const auto watermark = age_watermark(age, cfg_.cost_model, read_ratio_, size, points, arrival);
    // The batch of the current step was taken: this step's first turn breaks the prefix.
    const auto step = (size - age.trigger_tokens) / age.step_tokens;
    const auto line = age.trigger_tokens + step * age.step_tokens;
    report_.age_batch = watermark && watermark + std::min(line, age.keep_tokens) == line;
    if (watermark && may_bring) {
      offer_ = true;
      report_.offer_reason = "age_pays";
      for (auto& c : cands_)  // the cost model's earlier "no" was for read_blob's arrival: it arrives now
        if (c.fate == output_fate::not_worth_it) c.chosen = true, c.fate = output_fate::below_threshold;
    }
    for (std::size_t i = 0; i < outputs.size() && points[i].end_tokens <= watermark; ++i) {
      if (!points[i].saving_tokens) continue;
      auto& c = *outputs[i];
      if (!decode(c) || c.size < cfg_.min_offload_bytes) continue;
      if (c.size > cfg_.max_blob_bytes) {
        ++report_.skipped_too_large;
        c.fate = output_fate::too_large;
        continue;
      }
      c.chosen = true;
      ++report_.age_offloads;
    }
  }

  // 2d. Outputs the model kept reading back stay inline (conversation_record).
  void keep_read_back_inline() {
    const auto* rec = reuse_.conversation;
    if (!rec || (rec->inline_handles.empty() && !rec->churning)) return;
    for (auto& c : cands_)
      if (c.chosen && rec->keeps_inline(hash_of(c))) {
        c.chosen = false;
        c.fate = output_fate::read_back;
        ++report_.kept_inline_churn;
      }
    report_.churn_batch = rec->batch_due && report_.kept_inline_churn;
  }

  // 3. Store each chosen output and build the reference that replaces it.
  //    A store failure leaves the output inline (fail-open).
  void store_and_replace() {
    if (const auto chosen = std::count_if(cands_.begin(), cands_.end(), [](const candidate& c) { return c.chosen; })) {
      report_.offloads.reserve(std::size_t(chosen));
      edits_.reserve(std::size_t(chosen) + 1);  // and read_blob's definition
    }
    // One clock read per output actually stored: a blob keep() confirms
    // (most of the few hundred a long conversation re-offloads every turn)
    // gets an instant span at the pass's last reading.
    std::uint64_t now = e_.now_ns_();
    for (auto& c : cands_) {
      if (!c.chosen) continue;
      if (c.size > cfg_.max_blob_bytes) {
        ++report_.skipped_too_large;
        c.fate = output_fate::too_large;
        continue;
      }
      offload_record rec = record_of(c, now);
      auto replacement = replacement_for(c, rec);
      bool confirmed = false;
      auto put = store(c, rec, now, confirmed);
      if (!confirmed) now = e_.now_ns_();
      if (!confirmed && put.error == blob_error::none) c.kept_ns = now;
      if (put.error != blob_error::none) {
        if (put.error == blob_error::too_large) ++report_.skipped_too_large;
        else if (put.error == blob_error::full) ++report_.store_full;
        else ++report_.store_failures;
        c.fate = put.error == blob_error::too_large ? output_fate::too_large
                 : put.error == blob_error::full    ? output_fate::store_full
                                                    : output_fate::store_failed;
        continue;
      }
      c.fate = output_fate::offloaded;
      rec.deduplicated = put.deduplicated;
      replacement.at = c.out->value;
      edits_.push_back(std::move(replacement));
      rec.end_ns = now;
      report_.offloads.push_back(std::move(rec));
    }
  }

  // 4. read_blob joins the tools: always (so the tools prefix never changes
  //    mid-conversation) or only when this request holds a reference
  //    (one it made, or one it carried in that the store resolves).
  void offer_read_blob() {
    const bool offer_anyway = cfg_.inject == inject_mode::always || (cfg_.inject == inject_mode::cost && offer_);
    bool inject = !report_.offloads.empty() || (offer_anyway && scan_.tools.has_value()) ||
                  carries_followable_reference();
    if (!inject || declared(report_.tool_name)) return;
    const auto& def = definition();
    if (scan_.tools) {
      // Append after the client's tools: their bytes (and cache breakpoints) stay put.
      bool empty = scan_.tools->size() >= 2 &&
                   body_.substr(scan_.tools->begin + 1, scan_.tools->size() - 2).find_first_not_of(" \t\r\n") ==
                       std::string_view::npos;
      edits_.push_back({{scan_.tools->end - 1, scan_.tools->end - 1}, (empty ? "" : ",") + def, nullptr, false});
    } else {
      auto added = d_.tools_insertion(body_, scan_, def);  // a new tools array, where this API keeps it
      edits_.push_back({{added.at, added.at}, std::move(added.text), nullptr, false});
    }
    report_.tool_injected = true;
    report_.tool_tokens = e_.definition_tokens(d_, report_.tool_name, def);
  }

  // What this turn derived from its outputs' bytes, for the next turn.
  void learn() const {
    if (!reuse_.learn) return;
    auto& out = *reuse_.learn;
    out.clear();
    out.reserve(cands_.size());
    for (const auto& c : cands_)
      if (c.decoded)
        out.push_back({c.out->value, c.out->image, c.exact, c.size, c.hash, c.gist,
                       c.gist ? ref_cfg_.tool_name : std::string(), c.fate == output_fate::offloaded ? c.kept_ns : 0});
    auto by_place = [](const output_memo& a, const output_memo& b) { return a.value.begin < b.value.begin; };
    if (!std::is_sorted(out.begin(), out.end(), by_place)) std::sort(out.begin(), out.end(), by_place);
  }

  // What became of each output, in scan order.
  void report_fates() {
    report_.fates.reserve(cands_.size());
    for (const auto& c : cands_) report_.fates.push_back(c.fate);
  }

  // 5. Splice: copy the untouched bytes around each edit.
  void splice() {
    if (edits_.empty()) return;
    std::sort(edits_.begin(), edits_.end(), [](const edit& a, const edit& b) { return a.at.begin < b.at.begin; });
    std::size_t size = body_.size();
    for (const auto& e : edits_) size = size - e.at.size() + e.size();
    auto& out = result_.body;
    out.reserve(size);
    std::size_t pos = 0;
    for (const auto& e : edits_) {
      out.append(body_.substr(pos, e.at.begin - pos));
      e.append_to(out);
      pos = e.at.end;
    }
    out.append(body_.substr(pos));
    report_.outcome = rewrite_outcome::rewritten;
    result_.edits = std::move(edits_);
  }

 private:
  // Our read_blob's name, unless the client declared a tool of that name
  // (then the fallback name). A declaration byte-identical to our own
  // definition is ours, arriving from another gistproxy: keep its name.
  std::string choose_tool_name() {
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

  // read_blob's definition for this API and name, built once per request.
  const std::string& definition() {
    if (definition_.empty()) definition_ = d_.read_blob_tool(report_.tool_name);
    return definition_;
  }

  bool declared(std::string_view n) const {
    return std::find(scan_.declared_tools.begin(), scan_.declared_tools.end(), n) != scan_.declared_tools.end();
  }

  // Whether an output's bytes can be offloaded exactly, decided once: its
  // JSON-unescaped text (valid UTF-8) or base64-decoded image. The previous
  // turn's answer stands for bytes both turns share.
  bool decode(candidate& c) {
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
  static bool materialize(candidate& c) {
    c.materialized = true;
    bool lossy = false;
    bool ok = c.out->image ? base64_decode(c.out->raw, c.bytes) : json::unescape(c.out->raw, c.bytes, &lossy);
    if (ok && !c.out->image && !text::is_valid_utf8(c.bytes)) lossy = true;
    return ok && !lossy;
  }

  static const std::string& content(candidate& c) {
    if (!c.materialized) materialize(c);  // an exact output the previous turn decoded: exact again
    return c.bytes;
  }

  static const std::string& hash_of(candidate& c) {
    if (!c.hash) c.hash = std::make_shared<const std::string>(sha256_hex(content(c)));
    return *c.hash;
  }

  // The output's gist: the previous turn's for the same bytes (the same
  // read_blob name and the same tool), else the engine's cache, else made
  // from the bytes.
  const std::shared_ptr<const gist>& gist_of(candidate& c) const {
    if (c.gist) return c.gist;
    if (c.known && c.known->gist && c.known->gist_for == ref_cfg_.tool_name &&
        c.known->gist->tool_name == c.out->tool_name)
      return c.gist = c.known->gist;
    const auto& hash = hash_of(c);
    if (auto g = e_.cached_gist(tenant_, hash, c.out->tool_name, ref_cfg_)) return c.gist = std::move(g);
    return c.gist = e_.gist_of(tenant_, content(c), hash, c.out->tool_name, ref_cfg_);
  }

  // Stores a chosen output. Bytes the previous turn offloaded are usually
  // stored already: keep() confirms it (and refreshes the TTL as a put
  // would) without decoding them; a blob gone since is stored again.
  put_result store(candidate& c, const offload_record& rec, std::uint64_t now, bool& confirmed) {
    confirmed = c.known && c.hash && (trusted(*c.known, now) || e_.store_.keep(tenant_, *c.hash));
    if (confirmed) {
      // A confirmation taken on trust keeps its time: the store is asked
      // again once it would look again itself.
      c.kept_ns = trusted(*c.known, now) ? c.known->kept_ns : now;
      return {blob_error::none, true, {}};
    }
    if (!reuse_.may_store) {
      report_.store_needed = true;
      return {blob_error::io, false, "not stored: this pass may not block"};
    }
    return e_.store_.put(content(c), blob_meta{std::string(rec.hash), c.size, rec.kind, 0, std::string(tenant_), rec.tool_name});
  }

  // The previous turn's confirmation that the store holds these bytes, while
  // the store would trust its own: a long conversation re-offloads a few
  // hundred outputs every turn, and asking the store for each costs a lock,
  // a clock reading and a cold hash-table lookup.
  bool trusted(const output_memo& m, std::uint64_t now) const {
    return m.kept_ns && now >= m.kept_ns && now - m.kept_ns < e_.store_.keep_trust_ns();
  }

  tool_rule rule_of(const tool_output& o) const {
    auto it = cfg_.tool_rules.find(o.tool_name);
    if (it != cfg_.tool_rules.end()) return it->second;
    return {tool_rule::action::threshold, threshold_tokens_};
  }

  bool age_eligible(const candidate& c) const {
    return !c.chosen && !c.out->image && c.fate == output_fate::below_threshold &&
           rule_of(*c.out).what == tool_rule::action::threshold && c.out->raw.size() >= cfg_.min_offload_bytes &&
           rough_tokens(c.out->raw.size()) >= cfg_.age.threshold_tokens;
  }

  bool budget_eligible(const candidate& c) const {
    return !c.chosen && rule_of(*c.out).what != tool_rule::action::never && c.out->raw.size() >= cfg_.min_offload_bytes;
  }

  offload_record record_of(candidate& c, std::uint64_t start_ns) const {
    offload_record rec;
    rec.start_ns = start_ns;
    rec.hash = hash_of(c);
    rec.hash_text = c.hash;
    rec.tool_name = c.out->tool_name;
    rec.call_id = c.out->call_id;
    rec.order = c.out->order;
    rec.bytes = c.size;
    rec.repeated = c.known && c.known->kept_ns;
    return rec;
  }

  // What takes the output's place (its `at` is left to the caller), with its
  // kind and tokens before and after filled in. A text's reference is the
  // gist's, escaped once when the gist was made.
  edit replacement_for(candidate& c, offload_record& rec) const {
    if (c.out->image) {
      rec.kind = c.out->media_type.empty() ? "image" : c.out->media_type;
      rec.tokens_before = rough_tokens(c.out->raw.size());
      auto reference = render_image_reference(c.out->media_type, c.size, c.out->tool_name, rec.hash, ref_cfg_);
      rec.tokens_after = e_.estimator_.estimate(reference, content_kind::text);  // a short line
      return {{}, d_.image_replacement(reference), nullptr, false};
    }
    auto g = gist_of(c);
    rec.kind = std::string(kind_name(g->shape.kind));
    rec.tokens_before = g->shape.tokens;
    rec.tokens_after = g->reference_tokens;
    // Inside a string that keeps its header (c.out->inner): no quotes of our own.
    return {{}, {}, std::move(g), c.out->inner};
  }

  const offload_engine& e_;
  const offload_config& cfg_;
  const dialect& d_;
  std::string_view body_;
  std::string_view tenant_;
  double read_ratio_;  // the cost model's rho for this request's model
  std::uint64_t threshold_tokens_;  // the configured threshold, or this request's own
  const output_reuse& reuse_;
  rewrite_result& result_;
  rewrite_report& report_;
  request_scan scan_;
  reference_config ref_cfg_;
  std::vector<candidate> cands_;
  std::vector<edit> edits_;
  bool offer_ = false;  // inject_mode::cost: the cost model says read_blob pays here
  std::optional<bool> followable_;  // a reference in the request resolves in the tenant's store
  std::string definition_;
};

rewrite_result offload_engine::rewrite(const dialect& d, std::string_view body, std::string_view tenant,
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
