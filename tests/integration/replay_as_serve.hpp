// Replay of a trace with serve's defaults (the flags parsed from nothing) and
// an in-memory store: what tests compare with what serve itself forwarded.
#pragma once

#include <functional>

#include <catch2/catch.hpp>

#include "proxy/commands/wiring.hpp"
#include "proxy/runtime/config.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/replay/replay_run.hpp"

namespace gistproxy::testing {

inline rewrite::replay_stats replay_as_serve(const rewrite::recorded_trace& trace,
                                             const std::function<void(const rewrite::replayed_request&)>& on_request) {
  auto cfg = proxy::parse_serve_args({}, nullptr).cfg;
  REQUIRE(cfg);
  rewrite::memory_blob_store store([] { return std::int64_t(1000); });
  auto estimator = proxy::make_tokenizer(*cfg);
  rewrite::offload_engine engine(proxy::offload_config_of(*cfg), store, *estimator);
  rewrite::replayer replayer(engine, store, *estimator);
  return replayer.run(trace, "replay", on_request);
}

}  // namespace gistproxy::testing
