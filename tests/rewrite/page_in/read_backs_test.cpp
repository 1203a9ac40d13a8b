// Paging churn that acts (read_backs.hpp): once an output is read back on
// more than max_read_backs turns of its conversation, what the conversation
// read back goes inline from the next turn on, all together, and the outputs
// it never offloaded stay inline too.
#include <catch2/catch.hpp>

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

TEST_CASE("read back: an output read back on a second turn makes the conversation a re-reader") {
  read_back_ledger l;
  const auto a = sha256_hex("a"), b = sha256_hex("b"), c = sha256_hex("c");
  CHECK_FALSE(l.note(a, 1, 1));
  CHECK_FALSE(l.note(a, 1, 1));  // the same turn again (another page of it): not a new read-back
  CHECK_FALSE(l.note(b, 2, 1));  // read back once, on its own turn: a model reading it as it should
  conversation_record r;
  l.fill(r, 2);
  CHECK(r.inline_handles.empty());
  CHECK_FALSE(r.batch_due);
  CHECK_FALSE(r.churning);
  CHECK(l.note(a, 3, 1));  // a second turn: a re-reader
  CHECK(l.rereader());
  l.fill(r, 3);
  CHECK(r.inline_handles == std::vector<std::string>{std::min(a, b), std::max(a, b)});  // all it read back, sorted
  CHECK(r.batch_due);  // joined on the latest turn: the next turn takes them, and breaks the prefix there
  CHECK(r.churning);
  CHECK(r.keeps_inline(a));
  CHECK(r.keeps_inline(b));
  CHECK_FALSE(l.note(a, 4, 1));  // inline already
  l.fill(r, 4);
  CHECK_FALSE(r.batch_due);  // taken: later turns only keep them
  CHECK(l.note(c, 5, 1));    // offloaded before, first read back now: joins, in a batch of its own
  l.fill(r, 5);
  CHECK(r.batch_due);
  CHECK(r.keeps_inline(c));
}

TEST_CASE("read back: a higher limit waits for more turns of the same output") {
  read_back_ledger l;
  const auto a = sha256_hex("a"), b = sha256_hex("b");
  for (std::uint64_t turn = 1; turn <= 2; ++turn) {
    CHECK_FALSE(l.note(a, turn, 2));
    CHECK_FALSE(l.note(b, turn + 10, 2));  // b's turns are apart from a's: never counted together
  }
  CHECK_FALSE(l.rereader());
  CHECK(l.note(a, 3, 2));
  conversation_record r;
  l.fill(r, 3);
  CHECK(r.inline_handles.size() == 2);
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
  std::vector<std::string_view> all{a, b, c};
  for (std::uint64_t turn = 1; turn <= 2; ++turn) {
    CHECK(t.begin_turn("conv") == turn);
    t.offloaded("conv", all, turn, first);
    t.read_back("conv", a, turn, 1);
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
