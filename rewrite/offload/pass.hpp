// One request's rewrite, step by step (offload_engine::rewrite runs them in
// order): scan → choose (threshold, per-tool rules, budget, cost model, age,
// read-backs: choose.cpp) → store and build references → offer read_blob →
// splice (store_and_splice.cpp). What each output's bytes give (decoded text,
// hash, gist) is derived once, when a step first needs it (engine.cpp).
// Private to the engine: only its own files include this.
#pragma once

#include <algorithm>
#include <optional>

#include "rewrite/blob/digest.hpp"
#include "rewrite/offload/engine.hpp"

namespace gistproxy::rewrite {

class offload_engine::pass {
 private:
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
    bool aged = false;  // chosen for its age alone (apply_age)
    std::shared_ptr<const std::string> hash;  // computed once, when needed (or the previous turn's)
    output_fate fate = output_fate::below_threshold;
    std::uint64_t kept_ns = 0;  // when the store confirmed holding it (output_memo::kept_ns)
    std::uint64_t kept_losses = 0;  // the store's losses() then (output_memo::kept_losses)
  };

 public:
  pass(const offload_engine& e, const wire_format& d, json::document body, std::string_view tenant, double read_ratio,
       std::uint64_t threshold_tokens, const output_reuse& reuse, rewrite_result& out)
      : e_(e), cfg_(e.cfg_), d_(d), body_(body), tenant_(tenant), read_ratio_(read_ratio),
        threshold_tokens_(threshold_tokens), reuse_(reuse), result_(out), report_(out.report),
        losses_(e.store_.losses()) {}

  bool scan();

  // Choosing (choose.cpp): which outputs go to the store.
  void choose_by_rules();
  void apply_budget();
  void apply_cost_model();
  void apply_age();
  void keep_read_back_inline();

  // Storing and splicing (store_and_splice.cpp).
  void store_and_replace();
  void offer_read_blob();
  void splice();
  void report_fates();
  void learn() const;

 private:
  // Tokens the rest of the request costs, roughly: bytes/4.
  static std::uint64_t rough_tokens(std::size_t bytes) { return (bytes + 3) / 4; }

  // What offloading an output saves, roughly: its tokens less its reference
  // (a preview of at most a quarter of it, plus about 80 tokens of framing).
  static std::uint64_t rough_saving(std::size_t raw_bytes, std::uint64_t preview_tokens) {
    auto t = rough_tokens(raw_bytes);
    auto after = std::min<std::uint64_t>(preview_tokens, t / 4) + 80;
    return t > after ? t - after : 0;
  }

  // A reference the request carries in that the tenant's store resolves (choose.cpp).
  bool carries_followable_reference();
  bool find_followable_reference();
  bool age_eligible(const candidate& c) const;
  bool budget_eligible(const candidate& c) const;
  tool_rule rule_of(const tool_output& o) const {
    auto it = cfg_.tool_rules.find(o.tool_name);
    if (it != cfg_.tool_rules.end()) return it->second;
    return {tool_rule::action::threshold, threshold_tokens_};
  }

  // read_blob's name and definition for this request, and what an output's
  // bytes give (decoded, hashed, gist), each derived once (engine.cpp).
  std::string choose_tool_name();
  const std::string& definition();
  std::uint64_t definition_tokens();
  std::uint64_t definition_token_floor();  // never above definition_tokens() with an exact tokenizer
  bool declared(std::string_view n) const {
    return std::find(scan_.declared_tools.begin(), scan_.declared_tools.end(), n) != scan_.declared_tools.end();
  }
  bool decode(candidate& c);
  static bool materialize(candidate& c);
  static const std::string& content(candidate& c) {
    if (!c.materialized) materialize(c);  // an exact output the previous turn decoded: exact again
    return c.bytes;
  }
  static const std::string& hash_of(candidate& c) {
    if (!c.hash) c.hash = std::make_shared<const std::string>(sha256_hex(content(c)));
    return *c.hash;
  }
  const std::shared_ptr<const gist>& gist_of(candidate& c) const;

  // Storing (store_and_splice.cpp).
  put_result store(candidate& c, const offload_record& rec, std::uint64_t now, bool& confirmed);
  bool trusted(const output_memo& m, std::uint64_t now) const;
  offload_record record_of(candidate& c, std::uint64_t start_ns) const;
  edit replacement_for(candidate& c, offload_record& rec) const;

  const offload_engine& e_;
  const offload_config& cfg_;
  const wire_format& d_;
  json::document body_;
  std::string_view tenant_;
  double read_ratio_;  // the cost model's rho for this request's model
  std::uint64_t threshold_tokens_;  // the configured threshold, or this request's own
  const output_reuse& reuse_;
  rewrite_result& result_;
  rewrite_report& report_;
  std::uint64_t losses_;  // the store's losses() as the pass began (blob_store::losses)
  request_scan scan_;
  reference_config ref_cfg_;
  std::vector<candidate> cands_;
  std::vector<edit> edits_;
  bool offer_ = false;  // inject_mode::cost: the cost model says read_blob pays here
  std::optional<bool> followable_;  // a reference in the request resolves in the tenant's store
  tool_definition definition_;
};

}  // namespace gistproxy::rewrite
