// Choosing which of a request's tool outputs go to the store: the threshold
// and per-tool rules, then budget mode, or the cost model, age and the
// conversation's read-backs (offload_engine::rewrite runs them in order).
#include <algorithm>

#include "rewrite/gist/reference.hpp"
#include "rewrite/offload/pass.hpp"

namespace gistproxy::rewrite {

// 1. Threshold and per-tool rules. The escaped size bounds the decoded
//    size, and the tokenizer bounds tokens by bytes (one per byte for BPE),
//    so small outputs are skipped without decoding or counting them.
void offload_engine::pass::choose_by_rules() {
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
void offload_engine::pass::apply_budget() {
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
void offload_engine::pass::apply_cost_model() {
  if (report_.tool_already_ours) {  // offered already (another gistproxy): the prefix has it
    report_.offer_reason = "already_offered";
    offer_ = true;
    return;
  }
  const auto head = stable_head_bytes(body_.size(), scan_.conversation, scan_.second_item_begin);
  // With no output to pay for it, read_blob is offered only when its
  // definition is a small share of the stable head. A floor of its tokens
  // above that share decides as the exact count would (not offered), without
  // counting: a request with no output never builds the tokenizer's table.
  const bool none_chosen = std::none_of(cands_.begin(), cands_.end(), [](const candidate& c) { return c.chosen; });
  const auto floor = e_.estimator().exact() ? definition_token_floor() : 0;
  const bool head_rules_out = double(floor) > cfg_.cost_model.max_overhead * double(rough_tokens(head));
  const auto definition_tokens = none_chosen && head_rules_out ? floor : this->definition_tokens();
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
    // Where the output sits in the provider's cache order, not in the JSON:
    // tools sent after the messages are still cached before them.
    points.push_back({rough_tokens(cache_order_offset(body_.size(), scan_.conversation, c.out->value.begin)), saving});
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
// a model quoting one) that the tenant's store resolves, or may (it could
// not be asked): without read_blob on offer it could never be followed. A
// few are looked at, each a store lookup; a pass that may not block asks to
// be run where it may.
bool offload_engine::pass::carries_followable_reference() {
  if (!followable_) followable_ = find_followable_reference();
  return *followable_;
}

bool offload_engine::pass::find_followable_reference() {
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
    const auto error = e_.store_.get(tenant_, handle).error;
    // A store that cannot answer (a shared store unreachable from this
    // replica) cannot say the reference dangles: offered, its call is a
    // tool error that tells the model so. One such answer decides: asking
    // again for the next reference would only wait on the store again.
    if (error == blob_error::none || error == blob_error::io) return true;
  }
  return false;
}

// 2c. Age-aware offload: past the trigger, older outputs go down to the
//     age threshold, below a watermark the cost model moves batch by batch
//     (cost_model.hpp: age_watermark). Only where read_blob is on offer
//     already: its arrival would rewrite the whole prefix. Every input is
//     the output's raw size and place, so each turn decides the same way.
void offload_engine::pass::apply_age() {
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
  const auto arrival = may_bring ? definition_tokens() : 0;
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
    c.aged = true;
    ++report_.age_offloads;
  }
}

// 2d. Outputs the model kept reading back stay inline (conversation_record).
void offload_engine::pass::keep_read_back_inline() {
  const auto* rec = reuse_.conversation;
  if (!rec || (rec->inline_handles.empty() && !rec->churning)) return;
  for (auto& c : cands_)
    if (c.chosen && rec->keeps_inline(hash_of(c))) {
      c.chosen = false;
      c.fate = output_fate::read_back;
      ++report_.kept_inline_churn;
    }
  report_.churn_batch = rec->batch_due && report_.kept_inline_churn;
  // read_blob would arrive for the age batch alone, and the conversation
  // keeps all of it inline: nothing is left to read, so it does not come
  // (and a hop that took it back, turn_with_rereads_inline, stays right).
  const auto chosen = [](const candidate& c) { return c.chosen; };
  if (report_.offer_reason == "age_pays" && std::none_of(cands_.begin(), cands_.end(), chosen)) {
    offer_ = false;
    report_.offer_reason = "not_worth";
  }
}

bool offload_engine::pass::age_eligible(const candidate& c) const {
  return !c.chosen && !c.out->image && c.fate == output_fate::below_threshold &&
         rule_of(*c.out).what == tool_rule::action::threshold && c.out->raw.size() >= cfg_.min_offload_bytes &&
         rough_tokens(c.out->raw.size()) >= cfg_.age.threshold_tokens;
}

bool offload_engine::pass::budget_eligible(const candidate& c) const {
  return !c.chosen && rule_of(*c.out).what != tool_rule::action::never && c.out->raw.size() >= cfg_.min_offload_bytes;
}

}  // namespace gistproxy::rewrite
