// Prefix reuse (the turn memory) against the full path on hostile pairs of
// bodies: a previous turn and a next one that shares any number of its bytes
// (the input's second piece, or the first with a tail appended or cut). For
// every dialect the incremental path must forward, report and fingerprint
// exactly what the full path does, never reuse past the bytes both share,
// and never crash on a remembered record of garbage.
#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/turn_memory/turn_reuse.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace gistproxy::rewrite;

namespace {

struct outcome {
  std::optional<request_facts> facts;
  rewrite_result rewritten;
  std::optional<prefix_fingerprint> client, upstream;
};

outcome run(turn_reuse* reuse, const endpoint& d, const offload_engine& engine, std::string_view body) {
  outcome o;
  const auto layout = d.wire().cache_prefix();
  o.facts = reuse ? reuse->inspect(body) : d.wire().inspect(body);
  o.rewritten = reuse ? reuse->rewrite(engine, body, "t", std::nullopt, std::nullopt) : engine.rewrite(d.wire(), body, "t");
  o.client = reuse ? reuse->fingerprint_client(body, layout) : fingerprint_prefix(body, layout);
  if (o.rewritten.report.outcome == rewrite_outcome::rewritten)
    o.upstream = reuse ? reuse->fingerprint_forwarded(o.rewritten.body, layout) : fingerprint_prefix(o.rewritten.body, layout);
  return o;
}

bool same_fp(const std::optional<prefix_fingerprint>& a, const std::optional<prefix_fingerprint>& b) {
  return a.has_value() == b.has_value() && (!a || (a->head == b->head && a->cumulative == b->cumulative));
}

void check(const outcome& full, const outcome& inc) {
  if (inc.rewritten.report.outcome != full.rewritten.report.outcome) __builtin_trap();
  if (inc.rewritten.body != full.rewritten.body) __builtin_trap();
  if (inc.rewritten.report.fates != full.rewritten.report.fates) __builtin_trap();
  if (inc.facts.has_value() != full.facts.has_value()) __builtin_trap();
  if (full.facts && (inc.facts->conversation_key != full.facts->conversation_key || inc.facts->model != full.facts->model))
    __builtin_trap();
  if (!same_fp(full.client, inc.client) || !same_fp(full.upstream, inc.upstream)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gistproxy::fuzz::input in(data, size);
  const auto mode = in.byte();
  const std::string first(in.piece());
  std::string second(in.piece());
  if (mode % 3 == 1) second = first + second;                          // the previous turn, then a tail
  if (mode % 3 == 2) second = first.substr(0, first.size() / 2) + second;  // cut mid-way, then something else
  memory_blob_store full_store([] { return std::int64_t(1); }), inc_store([] { return std::int64_t(1); });
  char_ratio_estimator estimator;
  offload_config cfg;
  cfg.threshold_tokens = 8;
  cfg.min_offload_bytes = 16;
  cfg.text_tool_results = mode & 4 ? text_results::cline : text_results::none;
  offload_engine full(cfg, full_store, estimator), inc(cfg, inc_store, estimator);
  for (const auto* d : all_endpoints()) {
    turn_memory memory({std::size_t(8) << 20, 4});
    for (const std::string* body : {&first, static_cast<const std::string*>(&second)}) {
      turn_reuse reuse(memory.find("t", *d, *body), *d, *body);
      if (reuse.same_bytes() > body->size()) __builtin_trap();
      const auto a = run(nullptr, *d, full, *body);
      const auto b = run(&reuse, *d, inc, *body);
      check(a, b);
      memory.remember("t", "c", reuse.finish(*body, b.rewritten.body));
    }
  }
  return 0;
}
