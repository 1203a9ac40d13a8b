#include "proxy/exchange/blob_pager.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "proxy/exchange/phases.hpp"
#include "proxy/exchange/exchange_stats.hpp"
#include "proxy/net/descriptor_reserve.hpp"
#include "proxy/store/blob_io.hpp"
#include "proxy/store/store_call_trace.hpp"

namespace gistproxy::proxy {
namespace {

// One call's search may not hold a store thread (and the offloads queued
// behind it) for long, whatever pattern the model sent.
constexpr std::chrono::milliseconds page_in_search_budget{2000};

}  // namespace

blob_pager::answered_page blob_pager::page_of(const std::string& arguments) {
  answered_page p;
  p.start_ns = svc_.tracer.now();
  p.shortages_before = store::descriptor_shortages();
  std::string error;
  auto req = rewrite::parse_page_request(arguments, error);
  auto look = [&] {
    auto limits = rewrite::page_limits::with_page(svc_.cfg.page_max_bytes);
    const auto deadline = std::chrono::steady_clock::now() + page_in_search_budget;
    limits.out_of_time = [deadline] { return std::chrono::steady_clock::now() > deadline; };
    return rewrite::page_in(*svc_.store, ctx_.in.tenant, *req, limits);
  };
  if (req) p.page = look();
  else p.page.text = error;
  // Missing or damaged, while this request may carry the bytes (a blob
  // deleted inside the trust window, a file gone bad): stored again from
  // them, and looked up once more.
  const auto e = p.page.error;
  if (req && !stored_again_ && (e == rewrite::blob_error::not_found || e == rewrite::blob_error::integrity)) {
    stored_again_ = true;
    store_again(svc_, ctx_);
    if (auto again = look(); again.ok) {
      again.integrity_ok = p.page.integrity_ok;  // served, but the store had failed its check: still counted
      p.page = std::move(again);
      p.restored = e;
    }
  }
  // Counted here, off the I/O thread: a page can be 256 KiB. A store is only
  // wired with the offload engine (serve_command): its tokenizer counts pages.
  if (p.page.ok) p.tokens = svc_.offload->estimator().estimate(p.page.text, rewrite::content_kind::text);
  return p;
}

awaitable<std::vector<rewrite::call_result>> blob_pager::answer(const std::vector<rewrite::blob_call>& calls) {
  std::vector<rewrite::call_result> results;
  std::vector<answered_page> pages;
  ++hop_;
  const auto place = co_await enter_lane(svc_.lanes, ctx_.in.tenant);
  co_await asio::co_spawn(
      svc_.store_pool->get_executor(),
      [&]() -> asio::awaitable<void> {
        store::store_call_scope scope(ctx_.span.trace, ctx_.span.id);  // slow store calls become spans of this request
        for (const auto& call : calls) {
          if (auto seen = answered_.find(call.arguments); seen != answered_.end()) {
            results.push_back({call.id, seen->second.text, seen->second.is_error});
            continue;
          }
          auto p = page_of(call.arguments);
          results.push_back({call.id, p.page.text, !p.page.ok});
          answered_[call.arguments] = results.back();
          pages.push_back(std::move(p));
        }
        co_return;
      },
      use_awaitable);
  for (const auto& p : pages) record(p), note_read_back(p.page);
  co_return results;
}

awaitable<rewrite::page_result> blob_pager::page(const std::string& arguments) {
  const auto place = co_await enter_lane(svc_.lanes, ctx_.in.tenant);
  answered_page p = co_await asio::co_spawn(
      svc_.store_pool->get_executor(),
      [&]() -> asio::awaitable<answered_page> {
        store::store_call_scope scope(ctx_.span.trace, ctx_.span.id);
        co_return page_of(arguments);
      },
      use_awaitable);
  record(p);
  co_return std::move(p.page);
}

awaitable<rewrite::page_result> blob_pager::raw(const std::string& handle) {
  const auto place = co_await enter_lane(svc_.lanes, ctx_.in.tenant);
  answered_page p = co_await asio::co_spawn(
      svc_.store_pool->get_executor(),
      [&]() -> asio::awaitable<answered_page> {
        store::store_call_scope scope(ctx_.span.trace, ctx_.span.id);
        answered_page a;
        a.start_ns = svc_.tracer.now();
        a.shortages_before = store::descriptor_shortages();
        a.page = rewrite::read_raw(*svc_.store, ctx_.in.tenant, handle);
        co_return a;  // raw bytes go to a program, not into a context window: no tokens
      },
      use_awaitable);
  record(p);
  co_return std::move(p.page);
}

void blob_pager::note_read_back(const rewrite::page_result& r) {
  if (!svc_.offload || !r.ok || r.hash.empty()) return;
  auto& paged = paged_[r.hash];
  const bool before = rewrite::reads_back(paged, r.blob_bytes);
  paged += r.bytes_returned;
  if (before || !rewrite::reads_back(paged, r.blob_bytes)) return;
  // One entry per handle and request; a request's hops are bounded, and so is this.
  if (svc_.recorder && ctx_.upstream.read_backs.size() < max_recorded_read_backs) ctx_.upstream.read_backs.push_back(r.hash);
  if (svc_.churn && svc_.churn->read_back(ctx_.in.conversation.hex(), r.hash, ctx_.rw.turn,
                                          svc_.offload->config().max_read_backs))
    joined_inline_ = true;
}

void blob_pager::record(const answered_page& p) {
  const auto& r = p.page;
  if (!r.ok && p.shortages_before != store::descriptor_shortages())  // the model is told the store failed; the operator why
    out_of_descriptors_warning(svc_.log, "the blob store could not open a file; a read_blob call was answered with its error");
  auto s = svc_.tracer.start("page_in", telemetry::span_kind::internal, ctx_.span.trace, ctx_.span.id);
  s.start_unix_nano = p.start_ns;
  const auto result = exchange_stats::result_label(r);
  s.set("gistproxy.handle", r.hash);
  s.set("gistproxy.bytes_returned", r.bytes_returned);
  s.set("gistproxy.integrity_ok", r.integrity_ok);
  s.set_text("gistproxy.mode", rewrite::page_mode_name(r.mode));
  s.set_text("gistproxy.result", result);
  // Served, but only once stored again from the request: what the store had lost.
  if (p.restored != rewrite::blob_error::none) s.set_text("gistproxy.stored_again", rewrite::blob_error_name(p.restored));
  // The GenAI conventions' tool execution: read_blob ran (under the name it was
  // offered as); the tool whose output it paged back is gistproxy's to say.
  s.set_text("gen_ai.operation.name", "execute_tool");
  s.set_text("gen_ai.tool.name", ctx_.rw.intercept_tool.empty() ? std::string_view("read_blob") : std::string_view(ctx_.rw.intercept_tool));
  if (!r.tool_name.empty()) s.set("gistproxy.tool", r.tool_name);
  s.set("gen_ai.conversation.id", ctx_.in.conversation.hex());
  bool churn = false;
  if (svc_.churn && !r.hash.empty()) {
    auto turns = svc_.churn->turns_since_offload(ctx_.in.conversation.hex(), r.hash, ctx_.rw.turn);
    if (turns && *turns <= 1) {
      s.set("gistproxy.churn", std::int64_t(*turns));
      churn = true;
    }
  }
  exchange_stats(svc_.metrics, ctx_.in.api, ctx_.in.source).page_in(r, churn, p.tokens);
  if (svc_.live) {
    auto& live = ctx_.live;
    const auto& l = svc_.live->limits();
    if (live.page_ins.size() < l.details_per_turn)  // the handle and tool come from the model's call: cut them here
      live.page_ins.push_back({telemetry::live::keep_text(r.hash, l.max_handle_bytes, live.marks),
                               telemetry::live::keep_text(r.tool_name, l.max_tool_bytes, live.marks),
                               std::string(rewrite::page_mode_name(r.mode)), std::string(result), hop_, r.integrity_ok,
                               r.bytes_returned, r.ok ? p.tokens : 0});
    else
      ++live.page_ins_dropped;
  }
  if (r.ok) {
    s.set("gistproxy.tokens", p.tokens);
    ctx_.upstream.paged_in_tokens += p.tokens;
  }
  if (!r.ok) s.fail(std::string(result));
  svc_.tracer.end(s);
}

}  // namespace gistproxy::proxy
