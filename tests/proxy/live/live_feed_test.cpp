#include "proxy/live/live_feed.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>

using gistproxy::proxy::live_feed;
using namespace gistproxy::telemetry;

namespace {

std::string trace(int n) {
  char b[33];
  std::snprintf(b, sizeof b, "%032x", n);
  return b;
}

live::turn_event turn(int conversation, std::uint64_t ms) {
  live::turn_event e;
  e.trace_id = trace(conversation);
  e.api = "chat";
  e.model = "gpt-4o";
  e.group = "treated";
  e.unix_ms = ms;
  e.status = 200;
  return e;
}

// A feed on its own registry, with a clock the test moves.
struct feed_fixture {
  explicit feed_fixture(std::size_t queue_capacity = 4096)
      : metrics(registry_), feed(metrics, [this] { return now_ms; }, {}, queue_capacity) {}
  std::uint64_t now_ms = 600000;  // minute 10: the series' 60 minutes start before it
  registry registry_;
  metric_catalogue metrics;
  live_feed feed;

  nlohmann::json summary() { return nlohmann::json::parse(feed.summary_json()); }
  nlohmann::json conversations() { return nlohmann::json::parse(feed.conversations_json())["conversations"]; }
};

}  // namespace

TEST_CASE("live_feed drops and counts the events past its queue's capacity until the next tick") {
  feed_fixture f(2);
  for (int i = 1; i <= 5; ++i) f.feed.submit(turn(i, f.now_ms));
  CHECK(f.summary()["dropped"]["events"] == 3);
  f.feed.tick();
  auto kept = f.conversations();
  REQUIRE(kept.size() == 2);  // the first two, newest first
  CHECK(kept[0]["trace_id"] == trace(2));
  CHECK(kept[1]["trace_id"] == trace(1));
  // A tick empties the queue: the bound is on what waits, not on what ever came.
  f.feed.submit(turn(6, f.now_ms));
  f.feed.submit(turn(7, f.now_ms));
  f.feed.tick();
  CHECK(f.conversations().size() == 4);
  CHECK(f.summary()["dropped"]["events"] == 3);
}

TEST_CASE("live_feed hands submitted events to the ledger only when the admin thread ticks") {
  feed_fixture f;
  auto e = turn(7, f.now_ms);
  e.input_tokens = 1200;
  f.feed.submit(std::move(e));
  CHECK(f.conversations().empty());
  CHECK_FALSE(f.feed.conversation_json(trace(7)));
  f.feed.tick();
  auto one = f.feed.conversation_json(trace(7));
  REQUIRE(one);
  auto j = nlohmann::json::parse(*one);
  CHECK(j["model"] == "gpt-4o");
  CHECK(j["turns"] == 1);
  REQUIRE(j["turns_detail"].size() == 1);
  CHECK(j["turns_detail"][0]["input_tokens"] == 1200);
  CHECK(f.summary()["conversations_kept"] == 1);
  CHECK(f.summary()["ledger_bytes"] > 0);
  CHECK_FALSE(f.feed.conversation_json(trace(8)));
}

TEST_CASE("live_feed reads its totals from the metric registry by each series' labels") {
  feed_fixture f;
  auto& m = f.metrics;
  m.requests.labels({"chat", "200", "treated", "HTTP/1.1"}).inc(3);
  m.requests.labels({"chat", "502", "control", "HTTP/2"}).inc(1);
  m.input_tokens.labels({"chat", "treated"}).inc(900);
  m.input_tokens.labels({"chat", "control"}).inc(100);
  m.prompt_cache_tokens.labels({"chat", "read", "treated"}).inc(300);
  m.prompt_cache_tokens.labels({"chat", "uncached", "treated"}).inc(700);
  m.offload_tokens_before.labels({"chat"}).inc(5000);
  m.offload_tokens_after.labels({"chat"}).inc(1000);
  m.rewrite_failures.labels({"chat", "unparsable"}).inc(2);
  m.outputs_kept_inline.labels({"chat", "churn"}).inc(4);
  m.ledger_input_tokens.labels({"chat", "without"}).inc(1500);
  m.ledger_input_tokens.labels({"chat", "with"}).inc(1000);
  m.ledger_usd.labels({"chat", "without"}).add(0.75);
  m.ledger_usd.labels({"chat", "with"}).add(0.5);
  auto s = f.summary();
  CHECK(s["requests"] == 4);
  CHECK(s["input_tokens"] == 1000);
  CHECK(s["offloaded_tokens"] == 4000);
  CHECK(s["tokens_saved"] == 500);  // the ledger's, without - with
  CHECK(s["net_saved_usd"].get<double>() == Approx(0.25));
  CHECK(s["cache_read_share"].get<double>() == Approx(0.3));
  CHECK(s["rewrite_failures"]["unparsable"] == 2);
  CHECK(s["kept_inline_churn"] == 4);
  CHECK(s["groups"]["treated"]["requests"] == 3);
  CHECK(s["groups"]["treated"]["input_tokens"] == 900);
  CHECK(s["groups"]["control"]["requests"] == 1);
  CHECK(s["groups"]["control"]["input_tokens"] == 100);
}

TEST_CASE("live_feed shows a group only once one of its requests finished") {
  feed_fixture f;
  f.metrics.initialise_api_series({"chat"});  // zero series for both groups, as serve declares them
  f.metrics.requests.labels({"chat", "200", "treated", "HTTP/1.1"}).inc();
  f.metrics.input_tokens.labels({"chat", "treated"}).inc(10);
  auto groups = f.summary()["groups"];
  CHECK(groups.size() == 1);
  CHECK(groups.contains("treated"));
  CHECK_FALSE(groups.contains("control"));
  CHECK(f.summary()["rewrite_failures"].empty());  // declared store_error series at 0 are not failures
}

TEST_CASE("live_feed samples the totals into the per-minute series at each tick") {
  feed_fixture f;
  const std::uint64_t started = f.now_ms;
  f.metrics.input_tokens.labels({"chat", "treated"}).inc(100);
  f.feed.tick();
  f.now_ms += 60000;
  f.metrics.input_tokens.labels({"chat", "treated"}).inc(50);
  f.feed.tick();
  auto s = f.summary();
  CHECK(s["started_unix_ms"] == started);
  CHECK(s["unix_ms"] == f.now_ms);
  auto minutes = s["per_minute"];
  REQUIRE(minutes.size() >= 2);
  const auto& last = minutes[minutes.size() - 1];
  const auto& before = minutes[minutes.size() - 2];
  CHECK(last["unix_ms"] == f.now_ms);
  CHECK(last["sent"] == 50);
  CHECK(before["sent"] == 100);
}
