// Paging churn that acts (read_backs.hpp): once a turn re-reads most of what
// the model was shown before, what it read back goes inline from the next
// turn on, all together, and the outputs it never offloaded stay inline too;
// a stray re-read keeps one output inline.
#include <catch2/catch.hpp>

#include <algorithm>

#include "rewrite/endpoint.hpp"
#include "rewrite/blob/digest.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/page_in/churn_tracker.hpp"
#include "rewrite/page_in/read_backs.hpp"
#include "tests/support/tool_conversation.hpp"

using namespace gistproxy::rewrite;
using gistproxy::testing::body_of;
using gistproxy::testing::log_output;

TEST_CASE("read back: a page of at least half the blob reads it back, less does not") {
  CHECK(reads_back(1000, 1000));
  CHECK(reads_back(500, 1000));
  CHECK_FALSE(reads_back(499, 1000));
  CHECK_FALSE(reads_back(0, 0));  // an empty or unknown blob is never read back
}

TEST_CASE("read back: a turn re-reading most of what the model was shown makes the conversation a re-reader") {
  read_back_ledger l;
  const auto a = sha256_hex("a"), b = sha256_hex("b"), c = sha256_hex("c"), d = sha256_hex("d");
  l.shown_before(1, 0);
  CHECK_FALSE(l.note(a, 1, 1));
  CHECK_FALSE(l.note(a, 1, 1));  // the same turn again (another page of it): not a new read-back
  l.shown_before(2, 1);
  CHECK_FALSE(l.note(b, 2, 1));  // read back once, on its own turn: a model reading it as it should
  conversation_record r;
  l.fill(r, 2);
  CHECK(r.inline_handles.empty());
  CHECK_FALSE(r.batch_due);
  CHECK_FALSE(r.churning);
  l.shown_before(3, 3);          // a, b and c were shown before turn 3
  CHECK_FALSE(l.note(c, 3, 1, std::size_t(-1), true));  // c, a reference on turn 2, read now: one of three
  CHECK(l.note(a, 3, 1));        // a, read back before: two of three re-read, most
  CHECK(l.rereader());
  l.fill(r, 3);
  CHECK(r.inline_handles == std::vector<std::string>{std::min(a, c), std::max(a, c)});  // what turn 3 read, sorted
  CHECK(r.batch_due);  // joined on the latest turn: the next turn takes them, and breaks the prefix there
  CHECK(r.churning);
  CHECK_FALSE(std::binary_search(r.inline_handles.begin(), r.inline_handles.end(), b));  // read once: stays offloaded
  CHECK_FALSE(l.note(a, 4, 1));    // inline already
  l.fill(r, 4);
  CHECK_FALSE(r.batch_due);  // taken: later turns only keep them
  CHECK(l.note(d, 5, 1));    // first read back now: joins, in a batch of its own
  CHECK(l.note(b, 5, 1));    // read back again: joins too
  l.fill(r, 5);
  CHECK(r.batch_due);
  CHECK(r.keeps_inline(d));
  CHECK(r.keeps_inline(b));
  CHECK(std::is_sorted(r.inline_handles.begin(), r.inline_handles.end()));
}

TEST_CASE("read back: a stray re-read keeps only that output inline and from its second re-read") {
  read_back_ledger l;
  std::vector<std::string> h;
  for (int i = 0; i < 10; ++i) h.push_back(sha256_hex(std::to_string(i)));
  for (std::uint64_t turn = 1; turn <= 10; ++turn) {
    l.shown_before(turn, turn - 1);
    CHECK_FALSE(l.note(h[turn - 1], turn, 1));  // each output once, on its own turn
  }
  conversation_record r;
  l.shown_before(11, 10);
  CHECK_FALSE(l.note(h[2], 11, 1));  // one of ten, again: a stray, still paged
  l.shown_before(12, 10);
  CHECK_FALSE(l.note(h[5], 12, 1, std::size_t(-1), true));  // another, a turn late: still one of ten
  l.shown_before(13, 10);
  CHECK(l.note(h[2], 13, 1));  // its second re-read: that output alone stays inline
  CHECK_FALSE(l.rereader());
  l.fill(r, 13);
  CHECK(r.inline_handles == std::vector<std::string>{h[2]});
  CHECK(r.batch_due);
  CHECK_FALSE(r.churning);  // new outputs still go
  l.shown_before(14, 9);
  CHECK_FALSE(l.note(h[2], 14, 1));  // inline already, and one of nine
}

TEST_CASE("read back: a turn never told what was shown takes any re-read for most") {
  read_back_ledger l;
  const auto a = sha256_hex("a");
  CHECK_FALSE(l.note(a, 1, 1));
  CHECK(l.note(a, 2, 1));
  CHECK(l.rereader());
}

TEST_CASE("read back: a late note of an earlier turn is weighed as a stray") {
  read_back_ledger l;
  const auto a = sha256_hex("a"), b = sha256_hex("b");
  l.shown_before(5, 1);
  CHECK_FALSE(l.note(a, 4, 1, std::size_t(-1), true));  // turn 4's hop, after turn 5 began
  CHECK_FALSE(l.rereader());
  CHECK(l.note(b, 5, 1, std::size_t(-1), true));  // turn 5's own: one of one
  CHECK(l.rereader());
}

TEST_CASE("read back: a higher limit waits for more re-reads of the same output") {
  read_back_ledger l;
  const auto a = sha256_hex("a"), b = sha256_hex("b");
  for (std::uint64_t turn = 1; turn <= 2; ++turn) {
    l.shown_before(turn, 1);
    CHECK_FALSE(l.note(a, turn, 2));  // turn 2 is its first re-read: under the limit
  }
  CHECK_FALSE(l.rereader());
  l.shown_before(3, 2);
  CHECK_FALSE(l.note(b, 3, 2, std::size_t(-1), true));  // b's first re-read: under the limit too
  CHECK(l.note(a, 3, 2));  // a's second: counts, one of two
  conversation_record r;
  l.fill(r, 3);
  CHECK(r.inline_handles == std::vector<std::string>{std::min(a, b), std::max(a, b)});  // all turn 3 read
}

TEST_CASE("read back: a limit of zero never keeps an output inline") {
  read_back_ledger l;
  for (std::uint64_t turn = 1; turn <= 10; ++turn) CHECK_FALSE(l.note(sha256_hex("a"), turn, 0));
  conversation_record r;
  l.fill(r, 10);
  CHECK(r.inline_handles.empty());
  CHECK_FALSE(r.churning);
}

TEST_CASE("read back: a model reading each output once keeps them offloaded") {
  churn_tracker t;
  std::vector<std::string> outputs;
  std::vector<bool> first;
  for (std::uint64_t turn = 1; turn <= 12; ++turn) {
    CHECK(t.begin_turn("conv") == turn);
    outputs.push_back(sha256_hex(std::to_string(turn)));
    std::vector<std::string_view> all(outputs.begin(), outputs.end());
    t.offloaded("conv", all, turn, first);
    t.read_back("conv", outputs.back(), turn, 1);  // the new one, whole, once
    const auto r = t.record("conv");
    CHECK_FALSE(r.churning);
    CHECK(r.inline_handles.empty());
  }
}

TEST_CASE("read back: a re-reading conversation keeps what it never offloaded inline, and what it did offloaded") {
  churn_tracker t;
  const auto a = sha256_hex("a"), b = sha256_hex("b"), c = sha256_hex("c"), fresh = sha256_hex("new");
  std::vector<bool> first;
  for (std::uint64_t turn = 1; turn <= 2; ++turn) {
    CHECK(t.begin_turn("conv") == turn);
    const auto offloads = turn == 1 ? std::vector<std::string_view>{a} : std::vector<std::string_view>{a, b, c};
    t.offloaded("conv", offloads, turn, first);
    t.read_back("conv", a, turn, 1);  // turn 2: a, the one output shown before, again
    CHECK(t.record("conv").churning == (turn == 2));
  }
  auto r = t.record("conv");
  CHECK(r.keeps_inline(a));
  CHECK_FALSE(r.keeps_inline(b));  // offloaded, never read back: stays offloaded (no break)
  CHECK(r.keeps_inline(fresh));    // never offloaded here: the model would read it back too
  CHECK_FALSE(t.record("other").keeps_inline(fresh));
  // Another conversation's read-backs are its own.
  t.begin_turn("other");
  t.read_back("other", c, 1, 1);
  CHECK_FALSE(t.record("conv").keeps_inline(c));
}

TEST_CASE("read back: the engine keeps an output the record names inline, and a due batch is a planned break") {
  memory_blob_store store{[] { return std::int64_t(1000); }};
  char_ratio_estimator estimator;
  offload_config cfg;
  cfg.inject = inject_mode::always;
  offload_engine engine(cfg, store, estimator);
  const auto big = log_output("big", 40000), other = log_output("other", 40000);
  const auto body = body_of("chat", {big, other});
  const auto& chat = *endpoint_named("chat");
  CHECK(engine.rewrite(chat.wire(), body, "t").report.offloads.size() == 2);
  conversation_record record;
  record.inline_handles = {sha256_hex(big)};
  record.batch_due = true;
  output_reuse reuse;
  reuse.conversation = &record;
  auto r = engine.rewrite(chat.wire(), body, "t", std::nullopt, std::nullopt, reuse);
  REQUIRE(r.report.offloads.size() == 1);
  CHECK(r.report.offloads[0].hash == sha256_hex(other));
  CHECK(r.report.fates == std::vector<output_fate>{output_fate::read_back, output_fate::offloaded});
  CHECK(fate_name(output_fate::read_back) == "read_back");
  CHECK(r.report.kept_inline_churn == 1);
  CHECK(r.report.churn_batch);
  CHECK(r.body.find(nlohmann::json(big).dump()) != std::string::npos);  // as the client sent it
  record.batch_due = false;  // a later turn only keeps it
  CHECK_FALSE(engine.rewrite(chat.wire(), body, "t", std::nullopt, std::nullopt, reuse).report.churn_batch);
  // A churning conversation: what it never offloaded stays inline too, what it did stays offloaded.
  record = {};
  record.churning = true;
  record.offloaded_handles = std::make_shared<std::vector<std::string>>(std::vector<std::string>{sha256_hex(other)});
  r = engine.rewrite(chat.wire(), body, "t", std::nullopt, std::nullopt, reuse);
  CHECK(r.report.fates == std::vector<output_fate>{output_fate::read_back, output_fate::offloaded});
  CHECK_FALSE(r.report.churn_batch);  // nothing forwarded before changes
}
