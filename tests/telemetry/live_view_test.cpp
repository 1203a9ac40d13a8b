#include "telemetry/live_view.hpp"

#include <catch2/catch.hpp>

#include "rewrite/text/utf8.hpp"
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
  t3.kept_inline = 2;            // the conversation re-reads: its outputs stay inline
  ledger.add(t3);

  auto j = ledger.conversation_json(trace(1));
  REQUIRE(j);
  CHECK((*j)["turns"] == 3);
  CHECK((*j)["offloads"] == 4);
  CHECK((*j)["offloaded_tokens"] == 5800);
  CHECK((*j)["conversation_id"] == trace(1));  // the row's key; trace_id is its old name
  CHECK((*j)["trace_id"] == trace(1));
  CHECK((*j)["page_ins"] == 4);
  CHECK((*j)["churn"] == 3);  // a in turns 1 and 2, b in turn 2
  CHECK((*j)["integrity_failures"] == 1);
  CHECK((*j)["last_seen_unix_ms"] == 3000);
  CHECK((*j)["kept_inline"] == 2);
  const auto& turns = (*j)["turns_detail"];
  REQUIRE(turns.size() == 3);
  CHECK(turns[1]["kept_inline"] == 0);
  CHECK(turns[2]["kept_inline"] == 2);
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
  t.input_without = 1000;  // the ledger: what the headline figures are
  t.input_with = 600;
  t.usd_without = 0.5;
  t.usd_with = 0.125;
  t.unmeasured_requests = 1;
  t.rewrite_failures["unparsable"] = 2;
  t.groups["control"] = {1, 10, 0.25};
  t.kept_inline_churn = 7;
  t.unpriced_requests = 4;
  minute_series s;
  auto j = summary_json(t, s, drops{3, 0, 0, 0, 0, {}}, 6'000'000'000, 5'999'000'000);
  CHECK(j["tokens_saved"] == 400);
  CHECK(j["offloaded_tokens"] == 400);  // the offload estimate, apart
  CHECK(j["saved_share"].get<double>() == Approx(0.4));
  CHECK(j["unmeasured_requests"] == 1);
  CHECK(j["cache_read_share"].get<double>() == Approx(0.25));
  CHECK(j["net_saved_usd"].get<double>() == Approx(0.375));
  CHECK(j["rewrite_failures"]["unparsable"] == 2);
  CHECK(j["groups"]["control"]["requests"] == 1);
  CHECK(j["dropped"]["events"] == 3);
  CHECK(j["kept_inline_churn"] == 7);
  CHECK(j["unpriced_requests"] == 4);  // the summary line says them: they are in none of the dollars
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

namespace {

bool valid(const std::string& s) { return gistproxy::rewrite::text::is_valid_utf8(s); }
const std::string euro = "\xE2\x82\xAC", ellipsis = "\xE2\x80\xA6", fffd = "\xEF\xBF\xBD";

}  // namespace

TEST_CASE("keep_text keeps outside text bounded and valid UTF-8, cut on a character boundary and marked") {
  text_marks m;
  CHECK(keep_text("read_config", 128, m) == "read_config");
  CHECK(keep_text("", 128, m).empty());
  CHECK((m.cut == 0 && m.repaired == 0));
  CHECK(keep_text("ab\xFF", 128, m) == "ab" + fffd);
  CHECK(keep_text("x\xC3", 128, m) == "x" + fffd);                      // a sequence cut short
  CHECK(keep_text("\xC0\xAF", 128, m) == fffd + fffd);                   // an overlong form
  CHECK(keep_text("\xED\xA0\x80", 128, m) == fffd + fffd + fffd);        // a surrogate
  CHECK(m.repaired == 4);
  CHECK(keep_text("a" + euro + euro, 6, m) == "a" + ellipsis);           // 7 bytes: the cut would split a euro
  CHECK(keep_text(std::string(1 << 20, 't'), 128, m) == std::string(125, 't') + ellipsis);
  CHECK(m.cut == 2);

  // Every cut of a mixed string, every bound: valid, within the bound, and idempotent.
  const std::string mixed = "a" + euro + "\xF0\x9F\x98\x80" + "b\xFF" + euro + "\xC3\xA9z";
  for (std::size_t len = 0; len <= mixed.size(); ++len)
    for (std::size_t max = 0; max <= 20; ++max) {
      INFO("len " << len << " max " << max);
      text_marks once, again;
      auto kept = keep_text(mixed.substr(0, len), max, once);
      CHECK(kept.size() <= max);
      CHECK(valid(kept));
      CHECK(keep_text(kept, max, again) == kept);
      CHECK((again.cut == 0 && again.repaired == 0));
    }
}

TEST_CASE("the ledger keeps every client string bounded and valid UTF-8, so its JSON always serialises") {
  conversation_ledger ledger;
  auto e = turn(1, 1000);
  e.model = "ab";
  for (int i = 0; i < 30; ++i) e.model += euro;  // a 64-byte cut splits the 21st euro
  auto o = offload('a');
  o.tool = "run_\xFF\xFE";
  auto big = offload('b');
  big.tool = std::string(1 << 20, 't');
  e.new_offloads = {o, big};
  auto p = page_in('c');
  p.handle = "ref-\xC3";  // whatever a model's read_blob call named
  p.tool = "grep\xED\xA0\x80";
  e.page_ins = {p};
  ledger.add(e);
  auto g = turn(2, 2000);
  g.model = "gpt-\xFF";
  ledger.add(g);

  // The strict serialiser: it throws on any invalid byte kept.
  std::string list, detail;
  REQUIRE_NOTHROW(list = ledger.conversations_json(10).dump());
  REQUIRE_NOTHROW(detail = ledger.conversation_json(trace(1))->dump());
  CHECK((valid(list) && valid(detail)));
  auto d = nlohmann::json::parse(detail);
  CHECK(d["model"].get<std::string>().size() <= 64);
  CHECK(d["model"] == "ab" + [&] { std::string s; for (int i = 0; i < 19; ++i) s += euro; return s; }() + ellipsis);
  const auto& turn1 = d["turns_detail"][0];
  CHECK(turn1["new_offloads"][0]["tool"] == "run_" + fffd + fffd);
  CHECK(turn1["new_offloads"][1]["tool"].get<std::string>().size() == 128);
  CHECK(turn1["page_ins"][0]["handle"] == "ref-" + fffd);
  CHECK(turn1["page_ins"][0]["tool"] == "grep" + fffd + fffd + fffd);
  CHECK(nlohmann::json::parse(list)[0]["model"] == "gpt-" + fffd);
  CHECK(ledger.dropped().text.cut == 2);
  CHECK(ledger.dropped().text.repaired == 4);
}

TEST_CASE("the ledger's memory stays within its bound whatever the tool names, the least recently seen evicted") {
  limits l;
  l.max_bytes = 1 << 20;
  conversation_ledger ledger(l);
  const std::string long_tool(8 * 1024, 'x');
  char h = 0;
  for (int c = 0; c < 50; ++c)
    for (int t = 0; t < 4; ++t) {
      auto e = turn(c, std::uint64_t(c * 10 + t));
      for (int i = 0; i < 32; ++i) {
        auto o = offload(char('a' + (h++ % 26)));
        o.handle += std::to_string(c * 1000 + t * 100 + i);  // distinct: every one joins
        o.tool = long_tool;
        e.new_offloads.push_back(o);
      }
      ledger.add(e);
      CHECK(ledger.bytes() <= l.max_bytes);
    }
  std::size_t rendered = 0;
  for (const auto& c : ledger.conversations_json(200)) rendered += ledger.conversation_json(c["trace_id"])->dump().size();
  CHECK(rendered <= l.max_bytes);  // what the page polls is bounded too
  CHECK(ledger.conversation_json(trace(49)));  // the newest is kept
  CHECK(ledger.size() < 50);
  CHECK(ledger.dropped().conversations == 50 - ledger.size());
}
