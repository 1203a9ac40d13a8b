#include "telemetry/live_view.hpp"

#include <catch2/catch.hpp>

#include "telemetry/event_queue.hpp"

using namespace gistproxy::telemetry;
using namespace gistproxy::telemetry::live;

namespace {

std::string trace(int n) {
  char b[33];
  std::snprintf(b, sizeof b, "%032x", n);
  return b;
}

std::string handle(char c) { return std::string(64, c); }

turn_event turn(int conversation, std::uint64_t ms) {
  turn_event e;
  e.trace_id = trace(conversation);
  e.api = "chat";
  e.model = "gpt-4o";
  e.group = "treated";
  e.unix_ms = ms;
  e.status = 200;
  return e;
}

offload_detail offload(char h, std::uint64_t before = 1000, std::uint64_t after = 40) {
  return {handle(h), "read_config", "log", 120000, before, after};
}

page_in_detail page_in(char h, bool integrity_ok = true) {
  return {handle(h), "", "pattern", integrity_ok ? "ok" : "integrity", 1, integrity_ok, 300, 90};
}

}  // namespace

TEST_CASE("conversation_join marks a page-in within churn_turns of the first offload as churn") {
  conversation_join j(1);
  j.offload(handle('a'), "read_config", 2);
  j.offload(handle('a'), "read_config", 5);  // a re-offload keeps the first turn
  CHECK_FALSE(j.page_in(handle('a'), "", 1).churn);  // before its offload
  auto same = j.page_in(handle('a'), "", 2);
  REQUIRE(same.churn);
  CHECK(same.tool == "read_config");  // named by its offload
  CHECK(same.churn->turns_between() == 0);
  CHECK(j.page_in(handle('a'), "", 3).churn);
  CHECK_FALSE(j.page_in(handle('a'), "", 4).churn);
  CHECK_FALSE(j.page_in(handle('b'), "x", 2).churn);
}

TEST_CASE("conversation_join replaces an unknown first turn by a known one and counts handles past its bound") {
  conversation_join j(1, 2);
  j.offload(handle('a'), "t", 0);
  CHECK_FALSE(j.page_in(handle('a'), "", 0).churn);
  j.offload(handle('a'), "t", 3);
  CHECK(j.page_in(handle('a'), "", 4).churn);
  j.offload(handle('b'), "t", 1);
  j.offload(handle('c'), "t", 1);
  CHECK(j.handles() == 2);
  CHECK(j.handles_dropped() == 1);
}

TEST_CASE("the ledger joins a conversation's turns: churn pairs, integrity failures, tools from offloads") {
  conversation_ledger ledger;
  auto t1 = turn(1, 1000);
  t1.offloads = 2;
  t1.tokens_before = 3000;
  t1.tokens_after = 100;
  t1.new_offloads = {offload('a'), offload('b')};
  t1.page_ins = {page_in('a')};
  ledger.add(t1);
  auto t2 = turn(1, 2000);
  t2.offloads = 2;  // the same outputs offloaded again: not new
  t2.tokens_before = 3000;
  t2.tokens_after = 100;
  t2.page_ins = {page_in('a'), page_in('b', false)};
  ledger.add(t2);
  auto t3 = turn(1, 3000);
  t3.page_ins = {page_in('b')};  // two turns after its offload: no churn
  ledger.add(t3);

  auto j = ledger.conversation_json(trace(1));
  REQUIRE(j);
  CHECK((*j)["turns"] == 3);
  CHECK((*j)["offloads"] == 4);
  CHECK((*j)["tokens_saved"] == 5800);
  CHECK((*j)["page_ins"] == 4);
  CHECK((*j)["churn"] == 3);  // a in turns 1 and 2, b in turn 2
  CHECK((*j)["integrity_failures"] == 1);
  CHECK((*j)["last_seen_unix_ms"] == 3000);
  const auto& turns = (*j)["turns_detail"];
  REQUIRE(turns.size() == 3);
  CHECK(turns[0]["new_offloads"].size() == 2);
  CHECK(turns[0]["new_offloads"][0]["kind"] == "log");
  CHECK(turns[1]["new_offloads"].empty());
  CHECK(turns[0]["page_ins"][0]["churn"] == true);
  CHECK(turns[0]["page_ins"][0]["offload_turn"] == 1);
  CHECK(turns[0]["page_ins"][0]["tool"] == "read_config");
  CHECK(turns[1]["page_ins"][1]["integrity_ok"] == false);
  CHECK(turns[2]["page_ins"][0]["churn"] == false);
}

TEST_CASE("the ledger lists conversations newest first and evicts the least recently seen, counted") {
  limits l;
  l.conversations = 2;
  conversation_ledger ledger(l);
  ledger.add(turn(1, 1));
  ledger.add(turn(2, 2));
  ledger.add(turn(1, 3));  // 1 seen again: 2 is now the oldest
  ledger.add(turn(3, 4));
  auto list = ledger.conversations_json(10);
  REQUIRE(list.size() == 2);
  CHECK(list[0]["trace_id"] == trace(3));
  CHECK(list[1]["trace_id"] == trace(1));
  CHECK_FALSE(ledger.conversation_json(trace(2)));
  CHECK(ledger.dropped().conversations == 1);
  CHECK(ledger.conversations_json(1).size() == 1);
}

TEST_CASE("the ledger keeps a bounded number of turns and details, and counts the rest") {
  limits l;
  l.turns = 3;
  l.details_per_turn = 2;
  conversation_ledger ledger(l);
  for (int i = 0; i < 5; ++i) {
    auto e = turn(7, std::uint64_t(i));
    if (i == 0) {
      e.new_offloads = {offload('a'), offload('b'), offload('c')};
      e.new_offloads_dropped = 10;  // the hot path's own cap
    }
    ledger.add(e);
  }
  auto j = ledger.conversation_json(trace(7));
  REQUIRE(j);
  CHECK((*j)["turns"] == 5);
  CHECK((*j)["turns_detail"].size() == 3);
  CHECK((*j)["turns_not_shown"] == 2);
  CHECK((*j)["turns_detail"][0]["turn"] == 3);
  CHECK(ledger.dropped().turns == 2);
  CHECK(ledger.dropped().details == 11);
}

TEST_CASE("the ledger ignores events whose trace id is not 32 lowercase hex") {
  conversation_ledger ledger;
  auto e = turn(1, 1);
  e.trace_id = "../../etc/passwd";
  ledger.add(e);
  CHECK(ledger.size() == 0);
  CHECK(valid_trace_id(trace(255)));
  CHECK_FALSE(valid_trace_id(std::string(32, 'A')));
  CHECK_FALSE(valid_trace_id(std::string(31, 'a')));
  CHECK_FALSE(valid_trace_id(std::string(33, 'a')));
}

TEST_CASE("the minute series turns samples of totals into per-minute deltas over the last hour") {
  minute_series s(60);
  const std::uint64_t t0 = 100 * 60000;  // minute 100
  s.observe(t0 - 60000, {500, 50, 1, 0});  // minute 99: totals since start, counted from zero
  s.observe(t0 + 10000, {700, 80, 3, 1});
  s.observe(t0 + 61000, {1000, 100, 3, 1});  // minute 101
  auto j = s.to_json(t0 + 61000);
  REQUIRE(j.size() == 60);
  CHECK(j[59]["unix_ms"] == 101 * 60000);
  CHECK(j[59]["sent"] == 300);
  CHECK(j[59]["saved"] == 20);
  CHECK(j[58]["sent"] == 200);
  CHECK(j[58]["page_ins"] == 2);
  CHECK(j[58]["churn"] == 1);
  CHECK(j[57]["sent"] == 500);
  CHECK(j[0]["sent"] == 0);
  s.observe(t0 + 62000, {40, 100, 3, 1});  // a total that went down restarted: 40 in this minute, not -960
  CHECK(s.to_json(t0 + 62000)[59]["sent"] == 340);
  // An hour later the old minutes are gone, not folded into new ones.
  auto later = s.to_json(t0 + 61 * 60000);
  std::uint64_t sum = 0;
  for (const auto& m : later) sum += m["sent"].get<std::uint64_t>();
  CHECK(sum == 0);
}

TEST_CASE("the summary states shares and net dollars from the totals") {
  totals t;
  t.requests = 4;
  t.input_tokens = 600;
  t.tokens_before = 500;
  t.tokens_after = 100;
  t.cache_read_tokens = 150;
  t.cache_reported_tokens = 600;
  t.saved_usd = 0.5;
  t.overhead_usd = 0.125;
  t.rewrite_failures["unparsable"] = 2;
  t.groups["control"] = {1, 10, 0.25};
  minute_series s;
  auto j = summary_json(t, s, drops{3, 0, 0, 0, 0}, 6'000'000'000, 5'999'000'000);
  CHECK(j["tokens_saved"] == 400);
  CHECK(j["saved_share"].get<double>() == Approx(0.4));
  CHECK(j["cache_read_share"].get<double>() == Approx(0.25));
  CHECK(j["net_saved_usd"].get<double>() == Approx(0.375));
  CHECK(j["rewrite_failures"]["unparsable"] == 2);
  CHECK(j["groups"]["control"]["requests"] == 1);
  CHECK(j["dropped"]["events"] == 3);
  CHECK(j["per_minute"].size() == 60);
}

TEST_CASE("the event queue is bounded: a full queue drops and counts instead of growing") {
  event_queue<int> q(2);
  CHECK(q.push(1));
  CHECK(q.push(2));
  CHECK_FALSE(q.push(3));
  CHECK(q.dropped() == 1);
  auto got = q.take();
  CHECK(got == std::vector<int>{1, 2});
  CHECK(q.push(4));
  CHECK(q.take() == std::vector<int>{4});
}
