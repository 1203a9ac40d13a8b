// A conversation re-offloads most of its outputs every turn. The store is
// asked whether it still holds each (keep()) only once its own trust in an
// earlier answer would have run out (blob_store::keep_trust_ns): the previous
// turn's confirmation is carried in the turn memory, with the time it was
// given, and is never renewed by being trusted. What goes upstream is the
// same either way.
#include <catch2/catch.hpp>

#include <algorithm>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/turn_memory/turn_reuse.hpp"
#include "tests/rewrite/turn_memory/conversation_bodies.hpp"

using namespace gistproxy::rewrite;
using gistproxy::testing::conversation;

namespace {

constexpr std::uint64_t second = 1'000'000'000;

// A memory store that counts what it is asked, trusts its answers for
// `trust` ns, and can lose every blob (as a store wiped behind our back).
class counting_store final : public blob_store {
 public:
  explicit counting_store(std::uint64_t trust) : inner_([] { return std::int64_t(1700000000); }), trust_(trust) {}
  put_result put(std::string_view bytes, const blob_meta& meta) override {
    ++puts;
    return inner_.put(bytes, meta);
  }
  bool contains(std::string_view tenant, std::string_view hash) override {
    return !lost && inner_.contains(tenant, hash);
  }
  bool keep(std::string_view tenant, std::string_view hash) override {
    ++keeps;
    return contains(tenant, hash);
  }
  std::uint64_t keep_trust_ns() const override { return trust_; }
  std::uint64_t losses() const override { return losses_seen; }
  get_result get(std::string_view tenant, std::string_view prefix) override { return inner_.get(tenant, prefix); }
  verify_report verify() override { return inner_.verify(); }
  std::uint64_t gc(std::uint64_t max_removals) override { return inner_.gc(max_removals); }
  store_stats stats() override { return inner_.stats(); }

  int keeps = 0, puts = 0;
  bool lost = false;
  std::uint64_t losses_seen = 0;  // reads that found a blob missing or damaged (blob_store::losses)

 private:
  memory_blob_store inner_;
  std::uint64_t trust_;
};

offload_config eager_config() {
  offload_config cfg;
  cfg.threshold_tokens = 150;
  cfg.min_offload_bytes = 64;
  return cfg;
}

// One conversation turn by turn through the turn memory, at the time the
// test sets, beside a full rewrite of the same body with its own store.
struct conversation_run {
  explicit conversation_run(std::uint64_t trust)
      : store(trust), engine(eager_config(), store, estimator, [this] { return now; }),
        full_store(0), full_engine(eager_config(), full_store, estimator) {}

  rewrite_report turn(const std::string& body) {
    const endpoint& d = *endpoint_named("chat");
    turn_reuse reuse(memory.find("tenant", d, body), d, body);
    auto r = reuse.rewrite(engine, body, "tenant", std::nullopt, std::nullopt);
    const bool changed = r.report.outcome == rewrite_outcome::rewritten;
    const auto full = full_engine.rewrite(d.wire(), body, "tenant");
    REQUIRE((changed ? r.body : body) == (full.report.outcome == rewrite_outcome::rewritten ? full.body : body));
    memory.remember("tenant", "conversation", reuse.finish(body, changed ? r.body : std::string()));
    return std::move(r.report);
  }

  std::uint64_t now = 1700000000 * second;
  char_ratio_estimator estimator;
  counting_store store;
  offload_engine engine;
  counting_store full_store;
  offload_engine full_engine;
  turn_memory memory{{std::size_t(64) << 20, 8}};
};

std::size_t repeated(const rewrite_report& r) {
  return std::size_t(std::count_if(r.offloads.begin(), r.offloads.end(), [](const auto& o) { return o.repeated; }));
}

// A conversation with several offloaded outputs, grown by one call a turn.
std::vector<std::string> growing_bodies(int turns) {
  conversation conv("chat", 5);
  std::vector<std::string> bodies;
  for (int t = 0; t < turns; ++t) {
    conv.grow();
    bodies.push_back(conv.body());
  }
  return bodies;
}

}  // namespace

TEST_CASE("a blob the previous turn confirmed is not asked for again while the store would trust it",
          "[turn_memory]") {
  const auto bodies = growing_bodies(40);
  conversation_run run(10 * second);
  std::size_t offloaded_before = 0;
  int turns_with_repeats = 0;
  for (std::size_t t = 0; t < bodies.size(); ++t) {
    INFO("turn " << t);
    run.now += second / 4;  // 40 turns in 10 s: none outlives the trust
    const int keeps = run.store.keeps;
    const auto report = run.turn(bodies[t]);
    CHECK(run.store.keeps == keeps);
    // Every offload of the previous turn is offloaded again, and known as such.
    CHECK(repeated(report) == offloaded_before);
    turns_with_repeats += repeated(report) > 0;
    offloaded_before = report.offloads.size();
  }
  CHECK(turns_with_repeats > 20);
}

TEST_CASE("a trusted confirmation keeps its time: the store is asked once it has run out", "[turn_memory]") {
  const auto bodies = growing_bodies(6);
  conversation_run run(10 * second);
  run.turn(bodies[0]);
  const auto first_puts = run.store.puts;
  REQUIRE(first_puts > 0);
  run.now += 4 * second;
  run.turn(bodies[1]);
  run.now += 4 * second;
  run.turn(bodies[2]);
  CHECK(run.store.keeps == 0);
  // 11 s after turn 0 confirmed them, its blobs are asked for, although turns
  // 1 and 2 (which trusted that confirmation) are younger.
  run.now += 3 * second;
  auto report = run.turn(bodies[3]);
  CHECK(run.store.keeps >= first_puts);
  CHECK(run.store.keeps <= int(repeated(report)));
  // Those answers are fresh again: the next turn asks for none of them.
  const int keeps = run.store.keeps;
  run.now += second;
  report = run.turn(bodies[4]);
  CHECK(run.store.keeps == keeps);
}

TEST_CASE("a store that trusts nothing is asked every turn, and a lost blob is stored again once asked",
          "[turn_memory]") {
  const auto bodies = growing_bodies(5);
  conversation_run run(0);
  auto report = run.turn(bodies[0]);
  int keeps = run.store.keeps;
  report = run.turn(bodies[1]);
  CHECK(run.store.keeps - keeps == int(repeated(report)));
  CHECK(repeated(report) > 0);

  // Every blob lost: each is asked for, found missing, and stored again.
  run.store.lost = true;
  const int puts = run.store.puts;
  keeps = run.store.keeps;
  report = run.turn(bodies[2]);
  CHECK(run.store.keeps - keeps == int(repeated(report)));
  CHECK(run.store.puts - puts >= int(repeated(report)));
}

TEST_CASE("a confirmation the previous turn remembers is not trusted once a read has found a blob lost since",
          "[turn_memory]") {
  const auto bodies = growing_bodies(4);
  conversation_run run(10 * second);
  run.turn(bodies[0]);
  run.now += second;
  run.turn(bodies[1]);
  REQUIRE(run.store.keeps == 0);  // trusted, inside the window
  // A read (a page-in, /v1/blobs) finds a blob damaged: which conversation's
  // it is, the engine cannot tell, so every remembered confirmation is asked again.
  run.store.losses_seen = 1;
  run.now += second;
  auto report = run.turn(bodies[2]);
  CHECK(run.store.keeps == int(repeated(report)));  // was: 0, the damaged blob taken as stored for 10 s
  CHECK(repeated(report) > 0);
  // Those answers are fresh again, under the new count: trusted once more.
  const int keeps = run.store.keeps;
  run.now += second;
  run.turn(bodies[3]);
  CHECK(run.store.keeps == keeps);
}
