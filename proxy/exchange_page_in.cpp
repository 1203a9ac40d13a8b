// The page-in phase of an exchange: when a JSON answer of a request that
// offers read_blob contains the model's read_blob calls, answer them from the
// blob store (re-hashing every time), append the calls and their results to
// the conversation and ask the upstream again, until the model answers
// without read_blob or --max-page-in-hops is reached (the last hop forbids
// tool calls). The client only sees the final answer, with usage summed.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "proxy/exchange.hpp"
#include "proxy/exchange_detail.hpp"
#include "rewrite/intercept/splice.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/usage_observer.hpp"

namespace gistproxy::proxy {
namespace {

constexpr std::uint64_t max_intercepted_body = 16ull << 20;
constexpr std::chrono::milliseconds page_in_search_budget{2000};

std::string_view result_label(const rewrite::page_result& r) {
  if (r.ok) return "ok";
  if (r.error == rewrite::blob_error::none) return "bad_request";
  return rewrite::blob_error_name(r.error);
}

}  // namespace

bool exchange::interceptable(const request_context& ctx, const http::response_parser<http::empty_body>& head) const {
  if (ctx.intercept_tool.empty() || !svc_.store || ctx.request.method() == http::verb::head) return false;
  if (head.get().result_int() != 200) return false;
  auto length = head.content_length();
  return detail::response_body_kind(head.get()) == rewrite::usage_observer::body_kind::json && (!length || *length <= max_intercepted_body);
}

awaitable<std::optional<std::string>> exchange::page_in_hop(request_context& ctx,
                                                            http::response_parser<http::string_body>& answer,
                                                            const std::string& sent_body, int hop,
                                                            page_in_state& paging) {
  auto response = rewrite::checked::parse(answer.get().body());
  paging.hop_usage = {};
  if (!response.is_object()) co_return std::nullopt;  // not ours to touch: forwarded as it came
  paging.hop_usage = ctx.dialect->usage_from_response(response);
  auto calls = ctx.dialect->find_blob_calls(response, ctx.intercept_tool);
  const bool more_hops_allowed = hop < int(svc_.cfg.max_page_in_hops);
  if (calls.blob_calls.empty() || !more_hops_allowed) {
    bool changed = hop > 0;
    if (!calls.blob_calls.empty()) {
      // The upstream ignored the last hop's tool_choice: the client never
      // defined read_blob, so those calls are taken out of its answer.
      svc_.metrics.page_ins.labels({ctx.api, "full", "hop_limit"}).inc(calls.blob_calls.size());
      ctx.dialect->remove_blob_calls(response, ctx.intercept_tool);
      changed = true;
    }
    if (hop > 0) {
      // The final answer carries the usage of every hop.
      rewrite::add_numbers(paging.usage_sum, rewrite::checked::member(response, "usage"));
      response["usage"] = paging.usage_sum;
    }
    if (changed) paging.final_body = rewrite::checked::dump(response);
    ctx.usage = ctx.dialect->usage_from_response(response);
    co_return std::nullopt;
  }

  auto results = co_await resolve_calls(ctx, calls.blob_calls, paging);
  rewrite::add_numbers(paging.usage_sum, rewrite::checked::member(response, "usage"));
  const bool last_hop = hop + 1 >= int(svc_.cfg.max_page_in_hops);
  auto next = ctx.dialect->continue_conversation(sent_body, response, ctx.intercept_tool, results, last_hop);
  if (!next) {
    svc_.metrics.rewrite_failures.labels({ctx.api, "page_in_continue"}).inc();
    co_return std::nullopt;
  }
  ++paging.hops;
  co_return next;
}

awaitable<std::vector<rewrite::call_result>> exchange::resolve_calls(request_context& ctx,
                                                                      const std::vector<rewrite::blob_call>& calls,
                                                                      page_in_state& paging) {
  // On the store pool: reads, decompression and hashing block.
  std::vector<rewrite::call_result> results;
  std::vector<std::pair<rewrite::page_result, std::uint64_t>> pages;  // with start time, for spans
  auto* store = svc_.store;
  auto limits = rewrite::page_limits::with_page(svc_.cfg.page_max_bytes);
  const std::string tenant = ctx.tenant;
  auto& tracer = svc_.tracer;
  co_await asio::co_spawn(
      svc_.store_pool->get_executor(),
      [&]() -> awaitable<void> {
        for (const auto& call : calls) {
          if (auto seen = paging.answered.find(call.arguments); seen != paging.answered.end()) {
            // The same call twice in one request: the first answer again (no loops).
            results.push_back({call.id, seen->second.text, seen->second.is_error});
            continue;
          }
          auto start = tracer.now();
          std::string error;
          auto req = rewrite::parse_page_request(call.arguments, error);
          rewrite::page_result page;
          // One call's search may not hold a store thread (and the offloads
          // queued behind it) for long, whatever pattern the model sent.
          const auto deadline = std::chrono::steady_clock::now() + page_in_search_budget;
          limits.out_of_time = [deadline] { return std::chrono::steady_clock::now() > deadline; };
          if (req) page = rewrite::page_in(*store, tenant, *req, limits);
          else page.text = error;
          results.push_back({call.id, page.text, !page.ok});
          paging.answered[call.arguments] = results.back();
          pages.emplace_back(std::move(page), start);
        }
        co_return;
      },
      asio::use_awaitable);
  for (const auto& [page, start] : pages) record_page_in(ctx, page, start);
  co_return results;
}

void exchange::record_page_in(request_context& ctx, const rewrite::page_result& r, std::uint64_t start_ns) {
  auto& m = svc_.metrics;
  m.page_ins.labels({ctx.api, rewrite::page_mode_name(r.mode), result_label(r)}).inc();
  if (!r.integrity_ok) m.integrity_failures.labels({ctx.api}).inc();
  if (r.ok) m.paged_in_tokens.labels({ctx.api}).inc((r.bytes_returned + 3) / 4);

  auto s = svc_.tracer.start("page_in", telemetry::span_kind::internal, ctx.span.trace, ctx.span.id);
  s.start_unix_nano = start_ns;
  s.set("gistproxy.handle", r.hash);
  s.set("gistproxy.bytes_returned", r.bytes_returned);
  s.set("gistproxy.integrity_ok", r.integrity_ok);
  s.set("gistproxy.mode", std::string(rewrite::page_mode_name(r.mode)));
  s.set("gistproxy.result", std::string(result_label(r)));
  if (!r.tool_name.empty()) s.set("gen_ai.tool.name", r.tool_name);
  if (svc_.churn && !r.hash.empty()) {
    auto turns = svc_.churn->turns_since_offload(ctx.span.trace.hex(), r.hash, ctx.turn);
    if (turns && *turns <= 1) {
      s.set("gistproxy.churn", std::int64_t(*turns));
      m.paging_churn.labels({ctx.api}).inc();
    }
  }
  if (!r.ok) s.fail(std::string(result_label(r)));
  svc_.tracer.end(s);
}

void exchange::finish_paging(request_context& ctx, const page_in_state& paging) {
  if (!ctx.intercept_tool.empty()) svc_.metrics.page_in_hops.labels({ctx.api}).observe(double(paging.hops));
  ctx.span.set("gistproxy.page_in_hops", std::int64_t(paging.hops));
  ctx.hops = paging.hops;
}

}  // namespace gistproxy::proxy
