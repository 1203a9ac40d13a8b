// The turn memory's promise: the incremental path (a body compared with the
// conversation's previous turn, only the new tail walked, decoded and hashed)
// forwards exactly the bytes the full path forwards, and reports the same
// facts, decisions and prefix fingerprints. Checked on random growing
// conversations of every API, with the edits real clients make mid-way: an
// older output changed, a tool renamed, an item inserted or removed, the
// system prompt changed, another tenant, the same body sent twice.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <random>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/turn_memory/turn_reuse.hpp"
#include "tests/rewrite/turn_memory/conversation_bodies.hpp"

using namespace gistproxy::rewrite;
using gistproxy::testing::conversation;

namespace {

offload_config eager_config() {
  offload_config cfg;
  cfg.threshold_tokens = 150;  // many outputs offloaded, many left inline
  cfg.min_offload_bytes = 64;
  cfg.age.trigger_tokens = 4000;  // age-aware offload moves its watermark during the test
  cfg.age.threshold_tokens = 64;
  cfg.age.step_tokens = 1000;
  cfg.age.keep_tokens = 1500;
  cfg.age.decide = age_config::gate::tokens;
  return cfg;
}

struct path_result {
  std::optional<request_facts> facts;
  rewrite_result rewritten;
  std::string forwarded;
  std::optional<prefix_fingerprint> client, upstream;
};

// How the incremental path's rewrite ran: as the proxy runs a turn with a
// short new tail, first on a thread that may not block on the store.
struct attempts {
  bool first_without_store = false;
  int refused = 0, kept_inline = 0;  // first passes that needed the store / did not
};

// The proxy's order: inspect, rewrite, fingerprint what was sent and what goes.
path_result run(turn_reuse* reuse, const endpoint& d, const offload_engine& engine, const std::string& body,
                const std::string& tenant, attempts* tried = nullptr) {
  path_result r;
  const auto layout = d.wire().cache_prefix();
  r.facts = reuse ? reuse->inspect(body) : d.wire().inspect(body);
  bool done = false;
  if (reuse && tried && tried->first_without_store) {
    r.rewritten = reuse->rewrite(engine, body, tenant, std::nullopt, std::nullopt, false);
    done = !r.rewritten.report.store_needed;
    ++(done ? tried->kept_inline : tried->refused);
  }
  if (!done)
    r.rewritten = reuse ? reuse->rewrite(engine, body, tenant, std::nullopt, std::nullopt)
                        : engine.rewrite(d.wire(), body, tenant);
  const bool changed = r.rewritten.report.outcome == rewrite_outcome::rewritten;
  r.forwarded = changed ? r.rewritten.body : body;
  r.client = reuse ? reuse->fingerprint_client(body, layout) : fingerprint_prefix(body, layout);
  if (changed) r.upstream = reuse ? reuse->fingerprint_forwarded(r.forwarded, layout) : fingerprint_prefix(r.forwarded, layout);
  return r;
}

std::vector<std::string> hashes_of(const rewrite_report& r) {
  std::vector<std::string> out;
  for (const auto& o : r.offloads) out.push_back(std::string(o.hash) + "/" + o.kind + "/" + std::to_string(o.tokens_after));
  return out;
}

void same(const path_result& full, const path_result& inc) {
  REQUIRE(inc.forwarded == full.forwarded);
  REQUIRE(inc.rewritten.report.outcome == full.rewritten.report.outcome);
  REQUIRE(inc.rewritten.report.fates == full.rewritten.report.fates);
  REQUIRE(hashes_of(inc.rewritten.report) == hashes_of(full.rewritten.report));
  REQUIRE(inc.rewritten.report.tool_injected == full.rewritten.report.tool_injected);
  REQUIRE(inc.rewritten.report.skipped_lossy == full.rewritten.report.skipped_lossy);
  REQUIRE(inc.facts.has_value() == full.facts.has_value());
  if (full.facts) {
    REQUIRE(inc.facts->model == full.facts->model);
    REQUIRE(inc.facts->stream == full.facts->stream);
    REQUIRE(inc.facts->conversation_key == full.facts->conversation_key);
  }
  for (const auto* fp : {&full.client, &full.upstream}) {
    const auto& other = fp == &full.client ? inc.client : inc.upstream;
    REQUIRE(other.has_value() == fp->has_value());
    if (*fp) {
      REQUIRE(other->head == (*fp)->head);
      REQUIRE(other->cumulative == (*fp)->cumulative);
    }
  }
}

// One random conversation of one API, turn by turn, through both paths.
void check_conversation(const std::string& api, std::uint32_t seed, int turns) {
  const endpoint& d = *endpoint_named(api);
  std::mt19937 rng(seed);
  const auto clock = [] { return std::int64_t(1700000000); };
  memory_blob_store full_store(clock), inc_store(clock);
  char_ratio_estimator estimator;
  offload_engine full_engine(eager_config(), full_store, estimator);
  offload_engine inc_engine(eager_config(), inc_store, estimator);
  turn_memory memory({std::size_t(64) << 20, 8});
  conversation conv(api, rng());
  std::string tenant = "tenant-a";
  std::string previous_body;
  int reused = 0;  // turns that shared most of their bytes with the previous one: the path under test
  attempts tried;
  for (int t = 0; t < turns; ++t) {
    tried.first_without_store = t % 3 != 0;
    const std::string edit = conv.grow_or_edit(rng);
    if (rng() % 17 == 0) tenant = tenant == "tenant-a" ? "tenant-b" : "tenant-a";
    const std::string body = rng() % 13 == 0 && !previous_body.empty() ? previous_body : conv.body();
    INFO(api << " seed " << seed << " turn " << t << " (" << edit << "), " << body.size() << " bytes");
    const auto full = run(nullptr, d, full_engine, body, tenant);
    turn_reuse reuse(memory.find(tenant, d, body), d, body);
    if (reuse.same_bytes() > body.size() / 2) ++reused;
    const auto inc = run(&reuse, d, inc_engine, body, tenant, &tried);
    same(full, inc);
    const std::string forwarded = inc.rewritten.report.outcome == rewrite_outcome::rewritten ? inc.forwarded : "";
    auto turn = reuse.finish(body, forwarded);
    const auto& items = turn->items.items;  // ascending, each once, however many passes ran
    for (std::size_t i = 1; i < items.size(); ++i) REQUIRE(items[i - 1]->at.begin < items[i]->at.begin);
    memory.remember(tenant, "conversation", std::move(turn));
    previous_body = body;
  }
  CHECK(reused > turns / 2);
  CHECK(tried.refused > 0);      // first passes that had to be run again, where storing is allowed
  CHECK(tried.kept_inline > 0);  // and first passes that were the turn's only one
}

}  // namespace

TEST_CASE("the incremental path forwards what the full path forwards, on random growing conversations of every API",
          "[turn_memory]") {
  for (const std::string api : {"chat", "messages", "responses", "gemini", "bedrock-converse"})
    for (std::uint32_t seed = 1; seed <= 4; ++seed) check_conversation(api, seed * 7919 + api.size(), 45);
}

TEST_CASE("a turn shares nothing with another tenant's, nor with another API's", "[turn_memory]") {
  const endpoint& chat = *endpoint_named("chat");
  turn_memory memory({std::size_t(16) << 20, 8});
  conversation conv("chat", 3);
  std::mt19937 rng(5);
  for (int i = 0; i < 6; ++i) conv.grow_or_edit(rng);
  const auto body = conv.body();
  turn_reuse first(memory.find("tenant-a", chat, body), chat, body);
  REQUIRE(first.same_bytes() == 0);
  memory.remember("tenant-a", "c1", first.finish(body, ""));
  CHECK(memory.find("tenant-a", chat, body).same_bytes == body.size());
  CHECK(memory.find("tenant-b", chat, body).turn == nullptr);
  CHECK(memory.find("tenant-a", *endpoint_named("responses"), body).turn == nullptr);
}

TEST_CASE("the turn memory stays within its bytes and its share per tenant", "[turn_memory]") {
  const endpoint& chat = *endpoint_named("chat");
  turn_memory memory({std::size_t(1) << 20, 3});
  auto remember = [&](const std::string& tenant, int i, std::size_t size) {
    turn_reuse r({}, chat, {});
    std::string body = R"({"model":"m","messages":[{"role":"user","content":")" + std::to_string(i) +
                       std::string(size, 'x') + "\"}]}";
    memory.remember(tenant, "c" + std::to_string(i), r.finish(body, ""));
  };
  for (int i = 0; i < 5; ++i) remember("a", i, 1000);
  CHECK(memory.stats().conversations == 3);  // the tenant's share: its oldest went first
  for (int i = 0; i < 3; ++i) remember("b" + std::to_string(i), 10 + i, 400 * 1024);
  CHECK(memory.stats().bytes <= std::size_t(1) << 20);
  CHECK(memory.stats().evictions >= 3);
  remember("huge", 99, 2 << 20);  // larger than the whole memory: not kept
  CHECK(memory.stats().bytes <= std::size_t(1) << 20);
}

TEST_CASE("a buffer other than the one compared reuses nothing (a body swapped after it was looked up)", "[turn_memory]") {
  const endpoint& chat = *endpoint_named("chat");
  turn_memory memory({std::size_t(16) << 20, 8});
  conversation conv("chat", 9);
  std::mt19937 rng(2);
  for (int i = 0; i < 8; ++i) conv.grow_or_edit(rng);
  const auto first = conv.body();
  turn_reuse one(memory.find("t", chat, first), chat, first);
  REQUIRE(one.fingerprint_client(first, chat.wire().cache_prefix()).has_value());
  memory.remember("t", "c", one.finish(first, ""));

  conv.grow_or_edit(rng);
  const auto second = conv.body();
  turn_reuse two(memory.find("t", chat, second), chat, second);
  // The control group forwards the bytes the client sent, not the body that
  // was compared: an edit inside the shared bytes must show.
  const auto at = second.find("\"role\":\"tool\"") + 20;
  REQUIRE(at < two.same_bytes());
  std::string other = second;
  other[at] ^= 1;
  const auto reused = two.fingerprint_client(other, chat.wire().cache_prefix());
  const auto fresh = fingerprint_prefix(other, chat.wire().cache_prefix());
  REQUIRE(reused.has_value() == fresh.has_value());
  if (fresh) CHECK(reused->cumulative == fresh->cumulative);
}
