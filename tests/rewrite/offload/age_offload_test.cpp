// Age-aware offload: past a conversation-size trigger, older outputs below the
// threshold go too, in batches whose prefix-cache rewrite pays; the line moves
// only with the conversation's own prefix, so every turn between two batches
// extends the previous turn's forwarded prefix.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <memory>
#include <random>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "rewrite/prompt_cache/prefix_tracker.hpp"
#include "rewrite/offload/cost_model.hpp"
#include "rewrite/offload/engine.hpp"

using namespace gistproxy::rewrite;

TEST_CASE("age watermark: nothing below the trigger, then whole batches that pay") {
  age_config age{.trigger_tokens = 10000, .threshold_tokens = 500, .keep_tokens = 2000, .step_tokens = 4000};
  cost_model_config cost;
  cost.page_in_rate = 0;
  // 40 outputs of 800 tokens (saving 600), one every 900 tokens.
  std::vector<aged_output> outs;
  for (std::uint64_t i = 0; i < 40; ++i) outs.push_back({1000 + i * 900, 1800 + i * 900, 600});
  CHECK(age_watermark(age, cost, 0.1, 9999, outs) == 0);
  // At 10,000 tokens, batch 1 takes the outputs ending before 8,000 (7 of
  // them, 4,200 saved; 10 outputs before reach): 0.1 x 4,200 x 10 = 4,200
  // does not cover rewriting what follows the first, less what the batch
  // removes: 0.9 x (14,000 - 1,000 - 4,200) = 7,920.
  CHECK(age_watermark(age, cost, 0.1, 10000, outs) == 0);
  // Batch 2 joins it (12 outputs, 7,200 saved, 16 before reach): 11,520 >= 0.9 x 9,800.
  CHECK(age_watermark(age, cost, 0.1, 14000, outs) == 12000);
  CHECK(age_watermark(age, cost, 0.1, 17999, outs) == 12000);  // no move until the next step
  // Batch 3 has 4 new outputs: 0.1 x 2,400 x 19 < 0.9 x (22,000 - 11,800 - 2,400); they join batch 4.
  CHECK(age_watermark(age, cost, 0.1, 18000, outs) == 12000);
  CHECK(age_watermark(age, cost, 0.1, 22000, outs) == 20000);  // 0.1 x 5,400 x 23 >= 0.9 x 8,800
  // Outputs offloaded anyway shrink what a rewrite costs: batch 1 pays when
  // the two outputs after the line carry 5,000 tokens less in the forwarded
  // body: 4,200 >= 0.9 x (13,000 - 5,000 - 4,200).
  auto with_offloaded = outs;
  for (auto& o : with_offloaded)
    if (o.begin_tokens >= 8000) o.offloaded_saving = 2500, o.saving_tokens = 0;
  CHECK(age_watermark(age, cost, 0.1, 10000, with_offloaded) == 8000);
  // Gated by tokens instead, every batch goes: line 8,000 at 10,000.
  age.decide = age_config::gate::tokens;
  CHECK(age_watermark(age, cost, 0.1, 10000, outs) == 8000);
  CHECK(age_watermark(age, cost, 0.1, 13999, outs) == 8000);
  CHECK(age_watermark(age, cost, 0.1, 14000, outs) == 12000);
  age.decide = age_config::gate::cost;
  // A cheaper cache read (Anthropic's 0.08) makes batches wait longer; off is off.
  CHECK(age_watermark(age, cost, 0.08, 22000, outs) <= 20000);
  age.trigger_tokens = 0;
  CHECK(age_watermark(age, cost, 0.1, 1000000, outs) == 0);
}

TEST_CASE("age watermark only moves forward, at most once per step, as a conversation grows") {
  std::mt19937 rng(11);
  cost_model_config cost;
  for (int conversation = 0; conversation < 100; ++conversation) {
    age_config age{.trigger_tokens = 5000 + rng() % 20000, .threshold_tokens = 500,
                   .keep_tokens = rng() % 10000, .step_tokens = 1000 + rng() % 8000};
    std::vector<aged_output> outs;
    std::uint64_t size = 2000, last = 0, last_level = 0;
    for (int turn = 0; turn < 200; ++turn) {
      if (rng() % 2) {
        const std::uint64_t len = 500 + rng() % 3000;
        outs.push_back({size, size + len, len * 3 / 4});
        size += len;
      }
      size += 100 + rng() % 1500;
      const auto w = age_watermark(age, cost, 0.08, size, outs);
      CHECK(w >= last);
      const std::uint64_t level = size < age.trigger_tokens ? 0 : 1 + (size - age.trigger_tokens) / age.step_tokens;
      if (w != last) CHECK(level != last_level);  // moved only when a new step was reached
      CHECK(w + age.keep_tokens <= std::max(size, age.keep_tokens));  // the last keep tokens stay
      last = w;
      last_level = level;
    }
  }
}

namespace {

// A coding agent's conversation in Chat Completions: a head of `head_bytes`
// of tool description, then `turns` calls each answered by an output of
// 2,000-4,000 bytes.
std::string conversation(int turns, std::size_t head_bytes = 100000) {
  nlohmann::json tools = nlohmann::json::array(
      {{{"type", "function"}, {"function", {{"name", "read"}, {"description", std::string(head_bytes, 'd')}}}}});
  nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", "fix the build"}}});
  std::mt19937 rng(3);
  for (int i = 0; i < turns; ++i) {
    const std::string id = "c" + std::to_string(i);
    messages.push_back({{"role", "assistant"}, {"tool_calls", {{{"id", id}, {"type", "function"},
                                                                 {"function", {{"name", "read"}, {"arguments", "{}"}}}}}}});
    std::string out;
    const std::size_t len = 2000 + rng() % 2000;
    for (int line = 0; out.size() < len; ++line) out += "src/file" + std::to_string(i) + ".cc:" + std::to_string(line) + ": ok\n";
    messages.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", out}});
  }
  return nlohmann::json{{"model", "gpt-5"}, {"tools", tools}, {"messages", messages}}.dump();
}

// An engine with age-aware offload at small sizes (trigger 20,000 tokens).
struct age_engine {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  char_ratio_estimator estimator;
  offload_config cfg;
  std::unique_ptr<offload_engine> engine;
  explicit age_engine(inject_mode inject, std::uint64_t budget_tokens = 0) {
    cfg.inject = inject;
    cfg.budget_tokens = budget_tokens;
    cfg.age = {.trigger_tokens = 20000, .threshold_tokens = 400, .keep_tokens = 8000, .step_tokens = 8000};
    engine = std::make_unique<offload_engine>(cfg, store, estimator);
  }
  rewrite_result run(const std::string& body) { return engine->rewrite(endpoint_named("chat")->wire(), body, "t"); }
};

}  // namespace

TEST_CASE("age-aware offload in the engine: cache-stable between batches, every batch labelled, every output pageable") {
  age_engine e(inject_mode::cost);
  prefix_tracker tracker;
  int batches = 0, offloaded_last = 0;
  std::size_t last_size = 0;
  for (int turns = 1; turns <= 120; ++turns) {
    const auto body = conversation(turns);
    last_size = body.size();
    auto r = e.run(body);
    CHECK(r.report.offer_reason == "head");  // a 100 KB head: read_blob from the start
    const auto planned = r.report.age_batch ? planned_break::age : planned_break::none;
    const auto forwarded = r.report.outcome == rewrite_outcome::rewritten ? fingerprint_prefix(r.body, endpoint_named("chat")->wire().cache_prefix()) : std::nullopt;
    const auto verdict = tracker.observe("conversation", fingerprint_prefix(body, endpoint_named("chat")->wire().cache_prefix()), forwarded, planned);
    CHECK(verdict != prefix_verdict::proxy_break);  // never a break gistproxy did not plan
    if (verdict == prefix_verdict::age_break) ++batches;
    for (const auto& o : r.report.offloads) CHECK(e.store.contains("t", o.hash));
    CHECK(int(r.report.age_offloads) >= offloaded_last);  // what went for its age stays gone
    offloaded_last = int(r.report.age_offloads);
  }
  // 120 outputs of ~750 tokens: most of them go, in a handful of batches.
  CHECK(offloaded_last > 60);
  // At most one batch per step of growth past the trigger.
  CHECK(batches >= 1);
  CHECK(std::uint64_t(batches) <= 1 + (last_size / 4 - e.cfg.age.trigger_tokens) / e.cfg.age.step_tokens);
}

TEST_CASE("age-aware offload can bring read_blob: forwarded as sent until the first batch pays, offered from then on") {
  age_engine e(inject_mode::cost);
  int first_offer = 0;
  for (int turns = 1; turns <= 120; ++turns) {
    auto r = e.run(conversation(turns, 200));  // a small head: no read_blob from the start
    if (!first_offer) {
      if (r.report.offer_reason == "not_worth") {
        CHECK(r.report.outcome == rewrite_outcome::unchanged);
        continue;
      }
      first_offer = turns;
    }
    CHECK(r.report.offer_reason == "age_pays");  // and it never flips back
    CHECK(r.report.tool_injected);
    CHECK(r.report.age_offloads > 0);
  }
  CHECK(first_offer > 1);
}

TEST_CASE("age-aware offload stays off where read_blob is not on offer, and under budget mode") {
  age_engine referenced(inject_mode::when_referenced);
  auto r = referenced.run(conversation(120));
  CHECK(r.report.age_offloads == 0);
  CHECK(r.report.outcome == rewrite_outcome::unchanged);
  age_engine budget(inject_mode::cost, 1000000);  // a budget the conversation fits: nothing evicted, nothing aged
  auto b = budget.run(conversation(120));
  CHECK(b.report.age_offloads == 0);
  CHECK(b.report.budget_evictions == 0);
}
