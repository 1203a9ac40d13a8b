// The rewrite phase of an exchange: run the offload
// engine (on the store pool when the body is large enough to hold outputs
// worth storing), and turn its report into compaction spans and metrics.
// Every failure here is fail-open: the client's bytes go upstream as sent.
#include <algorithm>
#include <string_view>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "proxy/exchange/compaction_span.hpp"
#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/net/descriptor_reserve.hpp"
#include "proxy/store/blob_io.hpp"
#include "proxy/store/store_call_trace.hpp"

namespace gistproxy::proxy {
namespace {

// Below this size a body cannot hold an output worth offloading at sane
// thresholds, so the engine runs inline instead of hopping to the store pool.
constexpr std::size_t inline_rewrite_limit = 8 * 1024;

// An output offloaded for the first time in its conversation, for the live
// view: only these are detailed (a long conversation re-offloads hundreds of
// outputs every turn), and at most a few per request.
void note_new_offload(const live_feed& feed, live_notes& live, const rewrite::offload_record& o) {
  if (live.new_offloads.size() >= feed.details_per_turn()) {
    ++live.new_offloads_dropped;
    return;
  }
  const auto& l = feed.limits();
  live.new_offloads.push_back({telemetry::live::keep_text(o.hash, l.max_handle_bytes, live.marks),
                               telemetry::live::keep_text(o.tool_name, l.max_tool_bytes, live.marks), o.kind, o.bytes,
                               o.tokens_before, o.tokens_after});
}

// What became of the body, and the degraded modes it met (any request rewritten).
void record_outcome(exchange_stats& stats, const rewrite::rewrite_report& report) {
  switch (report.outcome) {
    case rewrite::rewrite_outcome::rewritten: stats.rewrite_outcome(rewrite_outcome_label::rewritten); break;
    case rewrite::rewrite_outcome::unchanged: stats.rewrite_outcome(rewrite_outcome_label::unchanged); break;
    case rewrite::rewrite_outcome::unparsable:
      stats.rewrite_outcome(rewrite_outcome_label::failed);
      stats.degraded_mode(degraded::unparsable);
      break;
  }
  stats.degraded_mode(degraded::too_large, report.skipped_too_large);
  stats.degraded_mode(degraded::lossy, report.skipped_lossy);
  stats.degraded_mode(degraded::store_error, report.store_failures);
  stats.degraded_mode(degraded::store_full, report.store_full);
}

// Blobs damaged on disk that this request's bytes replaced: each an
// integrity failure, found by a put instead of a read, and said once.
void count_found_damage(services& svc, const request_context& ctx, const rewrite::rewrite_report& report) {
  if (!report.found_damaged) return;
  exchange_stats(svc.metrics, ctx.in.api, ctx.in.source).blobs_found_damaged(report.found_damaged);
  svc.log.log(telemetry::log_level::warn, "damaged blobs replaced from the request's bytes",
              "\"blobs\":" + std::to_string(report.found_damaged));
}

// Turns a turn's report into metrics and one compaction span per offload
// (`trace`: the conversation's id in hex, as the caller has it already).
void record_rewrite(services& svc, request_context& ctx, const std::string& trace,
                    const rewrite::rewrite_report& report) {
  exchange_stats stats(svc.metrics, ctx.in.api, ctx.in.source);
  record_outcome(stats, report);
  std::uint64_t saved = 0;
  stats.offloads(report.offloads);
  // Only offloads the conversation's previous turn did not make can be new
  // to it: the churn tracker hears of those alone.
  std::vector<const rewrite::offload_record*> fresh;
  std::vector<std::string_view> hashes;
  std::vector<std::uint8_t> aged;  // not vector<bool>: a span views it
  for (const auto& o : report.offloads)
    if (!o.repeated) fresh.push_back(&o), hashes.push_back(o.hash), aged.push_back(o.aged);
  std::vector<bool> first;
  if (svc.churn)
    svc.churn->offloaded(trace, hashes, ctx.rw.turn, first, report.offloads.size() - fresh.size(),
                         aged);
  auto& live = ctx.live;
  for (std::size_t i = 0; i < first.size(); ++i)
    if (first[i] && svc.live) note_new_offload(*svc.live, live, *fresh[i]);
  auto& changes = ctx.rw.changes;
  for (const auto& o : report.offloads) {
    live.tokens_before += o.tokens_before;
    live.tokens_after += o.tokens_after;
    const auto removed = o.tokens_before > o.tokens_after ? o.tokens_before - o.tokens_after : 0;
    saved += removed;
    (o.repeated ? changes.offloaded_repeated : changes.offloaded_new) += removed;
    if (ctx.span.recording) emit_compaction_span(svc.tracer, ctx.span, o);  // spans go nowhere without an exporter
  }
  live.offloads += report.offloads.size();
  live.kept_inline += report.kept_inline_churn;
  ctx.rw.tokens_saved = saved;
  ctx.rw.tool_tokens = report.tool_tokens;
  changes.tool_definition = report.tool_tokens;
  // Without the churn tracker's record (rewrite() says when it has one): a
  // turn whose offloads are all new is taken for the one read_blob's
  // definition arrived on (a cache write).
  changes.tool_definition_new = changes.offloaded_repeated == 0;
  ctx.rw.planned = report.budget_evictions > 0 ? rewrite::planned_break::budget
                   : report.age_batch         ? rewrite::planned_break::age
                   : report.offer_arrives     ? rewrite::planned_break::offer
                   : report.churn_batch       ? rewrite::planned_break::churn
                                              : rewrite::planned_break::none;
  if (report.kept_inline_churn) stats.kept_inline(kept_inline_cause::churn, report.kept_inline_churn);
  if (report.age_offloads) ctx.span.set("gistproxy.age_offloads", std::int64_t(report.age_offloads));
  ctx.span.set("gistproxy.offloads", std::int64_t(report.offloads.size()));
  ctx.span.set("gistproxy.tokens_saved", saved);
  ctx.span.set("gistproxy.read_blob_injected", report.tool_injected);
  if (!report.offer_reason.empty()) {
    stats.read_blob_offer(report.offer_reason);
    ctx.span.set_text("gistproxy.read_blob_offer", report.offer_reason);
    const auto declined = std::count(report.fates.begin(), report.fates.end(), rewrite::output_fate::not_worth_it);
    if (declined) stats.outputs_not_worth_offloading(std::uint64_t(declined));
  }
}

// The control group's request goes upstream as the client sent it: the body
// it decoded for inspection is put back, with its Content-Encoding.
void restore_as_sent(received& in) {
  if (!in.sent_body) return;
  in.request.body() = std::move(*in.sent_body);
  in.top.forget();  // read from the decoded body
  in.request.set(http::field::content_encoding, in.sent_encoding);
  in.sent_body.reset();
}

// The cost model prices a request at its own model's cache discount.
std::optional<double> read_ratio_of(services& svc, request_context& ctx) {
  if (const auto* price = price_of(svc, ctx)) return rewrite::cache_read_ratio(price->price);
  return std::nullopt;
}
// The same, for a request done with (its connection's memo is not its own to touch).
std::optional<double> read_ratio_looked_up(const services& svc, const request_context& ctx) {
  if (svc.prices && ctx.in.facts)
    if (auto price = svc.prices->find(ctx.in.facts->model)) return rewrite::cache_read_ratio(*price);
  return std::nullopt;
}

// A body receive's verdict keeps from the engine: the control group's goes
// upstream as the client sent it; one the engine would have run on but for
// the client's say or the body itself is counted as a degraded mode.
void not_rewritten(services& svc, received& in) {
  std::string_view reason, outcome = rewrite_outcome_label::unchanged;
  switch (in.handling.why) {
    case rewrite::handling_why::control: restore_as_sent(in); return;
    case rewrite::handling_why::unknown_api:
    case rewrite::handling_why::offload_off:
    case rewrite::handling_why::undecodable:  // counted when the decoding failed
    case rewrite::handling_why::offload: return;
    case rewrite::handling_why::bypass: reason = degraded::bypass; break;
    // Changing a byte would break the client's signature, and signing again
    // with gistproxy's identity would act for someone else.
    case rewrite::handling_why::client_signed: reason = degraded::client_signed; break;
    case rewrite::handling_why::unparsable:
      reason = degraded::unparsable;
      outcome = rewrite_outcome_label::failed;
      break;
    case rewrite::handling_why::uninterceptable_answer: reason = degraded::uninterceptable_answer; break;
  }
  exchange_stats stats(svc.metrics, in.api);
  stats.degraded_mode(reason);
  stats.rewrite_outcome(outcome);
}

}  // namespace

// The trust that skipped the store (the previous turn's confirmation, the
// store's own) came from before this request: the bytes in the request are
// the truth. Run without the turn memory, every output the turn offloads is
// put again, and a put replaces what is missing or damaged.
void store_again(services& svc, const request_context& ctx) {
  if (!svc.offload || !ctx.in.endpoint || !ctx.rw.body || ctx.in.source != "proxy") return;
  store::directory_sync_batch batch;
  // As the turn decided it: read_blob offered before still chooses what it chose.
  rewrite::conversation_record record;
  record.offered = svc.churn && svc.churn->record(ctx.in.conversation.hex()).offered;
  rewrite::output_reuse reuse;
  reuse.conversation = &record;
  const auto again = svc.offload->rewrite(ctx.in.endpoint->wire(), ctx.in.request.body(), ctx.in.tenant,
                                         read_ratio_looked_up(svc, ctx), ctx.in.controls.threshold_tokens, reuse);
  count_found_damage(svc, ctx, again.report);  // the blob the read failed on was counted by the read
}

awaitable<void> rewrite(services& svc, request_context& ctx, rewrite::rewrite_report* report) {
  if (!ctx.in.handling.may_rewrite()) {
    not_rewritten(svc, ctx.in);
    co_return;
  }
  auto* engine = svc.offload;
  const std::string& body = ctx.in.request.body();
  const std::string& tenant = ctx.in.tenant;
  const auto read_ratio = read_ratio_of(svc, ctx);  // on the connection's thread: the memo is its
  rewrite::rewrite_result result;
  const auto threshold = ctx.in.controls.threshold_tokens;
  // The conversation's previous turn, when one helps: what both bodies share
  // is not scanned, decoded or hashed again (turn_reuse.cpp). receive made
  // one for the body it read, and a body it did not read is not rewritten.
  const auto& reuse = *ctx.turns.reuse;
  // What the conversation's earlier turns decided that this one keeps.
  const auto trace = ctx.in.conversation.hex();
  const auto record = svc.churn ? svc.churn->record(trace) : rewrite::conversation_record{};
  auto run = [&](bool may_store) {
    return reuse.rewrite(*engine, body, tenant, read_ratio, threshold, may_store, &record);
  };
  bool done = false;
  const auto shortages = store::descriptor_shortages();
  if (!svc.store_is_remote) {
    if (body.size() < inline_rewrite_limit) {
      result = run(true);
      done = true;
    } else if (reuse.new_bytes(body) < inline_rewrite_limit) {
      // A turn that adds little to its conversation mostly re-sends what is
      // stored: it is tried here, and goes to the store pool (run again) only
      // if it must store something, so most turns never leave this thread.
      result = run(false);
      done = !result.report.store_needed;
    }
  }
  if (!done) {
    // Hashing, compressing and fsync-ing blobs must not stall this I/O thread,
    // nor one tenant's bulk hold every store thread (store_lanes.hpp).
    const auto place = co_await enter_lane(svc.lanes, ctx.in.tenant);
    result = co_await asio::co_spawn(
        svc.store_pool->get_executor(),
        [&]() -> asio::awaitable<rewrite::rewrite_result> {
          store::store_call_scope scope(ctx.span.trace, ctx.span.id);  // slow store calls become spans of this request
          store::directory_sync_batch batch;  // one fsync per blob directory, done before the references leave
          co_return run(true);
        },
        use_awaitable);
  }
  count_found_damage(svc, ctx, result.report);
  if (store::descriptor_shortages() != shortages)  // what it could not store went as sent (store_failed)
    out_of_descriptors_warning(svc.log, "the blob store could not open a file; outputs not stored were forwarded as sent");
  if (ctx.in.count_tokens) {
    // A token count is the turn's body as it will be sent, not a turn: its
    // offloads are the turn's own (counted when the turn comes), its answer
    // carries no tool call to intercept, and it starts no paging turn.
    exchange_stats count_stats(svc.metrics, ctx.in.api, ctx.in.source);
    record_outcome(count_stats, result.report);
    if (result.report.outcome == rewrite::rewrite_outcome::rewritten) ctx.rw.body = std::move(result.body);
    co_return;
  }
  if (svc.churn) ctx.rw.turn = svc.churn->begin_turn(trace, ctx.in.retry);
  record_rewrite(svc, ctx, trace, result.report);
  // The definition is new on the turn the conversation first offers it; a
  // head big enough offers it from turn 1, on turns that offload nothing too.
  if (svc.churn) ctx.rw.changes.tool_definition_new = !record.offered;
  if (result.report.tool_injected || result.report.tool_already_ours) {
    ctx.rw.intercept_tool = result.report.tool_name;
    ctx.rw.tool_added = result.report.tool_injected;
    if (svc.churn && !record.offered) svc.churn->note_offered(trace);  // it stays, whatever later turns drop
  }
  if (result.report.outcome == rewrite::rewrite_outcome::rewritten) ctx.rw.body = std::move(result.body);
  if (report) *report = std::move(result.report);
}

awaitable<std::optional<std::string>> turn_with_rereads_inline(services& svc, request_context& ctx) {
  if (!svc.offload || !svc.churn || !ctx.in.endpoint || !ctx.rw.body || ctx.in.count_tokens || !ctx.turns.reuse)
    co_return std::nullopt;
  const std::string& body = ctx.in.request.body();
  const auto trace = ctx.in.conversation.hex();
  auto record = svc.churn->record(trace);
  // read_blob arrived with this turn: asked again without it first, the hop
  // is the previous turn's cached prefix and what follows it, if nothing is
  // left to read (withdrawn below).
  const bool arrived = ctx.rw.tool_added && ctx.rw.changes.tool_definition_new;
  if (arrived) record.offered = false;
  const auto& reuse = *ctx.turns.reuse;
  const auto read_ratio = read_ratio_of(svc, ctx);  // here: run() may go to the store pool
  auto run = [&] {
    // Every output was stored by this turn's first rewrite: nothing to store.
    return reuse.rewrite(*svc.offload, body, ctx.in.tenant, read_ratio, ctx.in.controls.threshold_tokens, false,
                         &record);
  };
  auto rerun = [&]() -> awaitable<rewrite::rewrite_result> {
    if (body.size() < inline_rewrite_limit || reuse.new_bytes(body) < inline_rewrite_limit) co_return run();
    const auto place = co_await enter_lane(svc.lanes, ctx.in.tenant);
    co_return co_await asio::co_spawn(
        svc.store_pool->get_executor(), [&]() -> asio::awaitable<rewrite::rewrite_result> { co_return run(); },
        use_awaitable);
  };
  auto result = co_await rerun();
  const auto& r = result.report;
  if (arrived && r.kept_inline_churn && r.offloads.empty() && !r.tool_injected && !r.tool_already_ours &&
      r.outcome != rewrite::rewrite_outcome::unparsable && !r.store_needed) {
    svc.churn->withdraw_offer(trace);
    ctx.span.set("gistproxy.churn_kept_inline_in_hop", std::int64_t(r.kept_inline_churn));
    ctx.span.set("gistproxy.read_blob_withdrawn", true);
    co_return r.outcome == rewrite::rewrite_outcome::rewritten ? std::move(result.body) : body;
  }
  if (arrived) {  // something is still offloaded: read_blob stays, as the first rewrite offered it
    record.offered = true;
    result = co_await rerun();
  }
  // The same read_blob on offer (its definition comes first in cache order).
  const bool same_offer = (r.tool_injected || r.tool_already_ours) && r.tool_name == ctx.rw.intercept_tool;
  if (r.outcome != rewrite::rewrite_outcome::rewritten || r.store_needed || !same_offer || result.body == *ctx.rw.body)
    co_return std::nullopt;
  ctx.span.set("gistproxy.churn_kept_inline_in_hop", std::int64_t(r.kept_inline_churn));
  co_return std::move(result.body);
}

}  // namespace gistproxy::proxy
