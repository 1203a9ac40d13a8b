#include "proxy/exchange/page_in_loop.hpp"

namespace gistproxy::proxy {

awaitable<int> run_page_in_loop(hop_source& source, hop_reader& reader, upstream_answer& first,
                                const std::string& first_body, const page_in_plan& plan, exchange_stats& stats,
                                const hop_noted& noted) {
  const auto note = [&](const hop_read& got, bool continued) {
    if (noted) noted(got, continued);
  };
  std::unique_ptr<upstream_answer> later;  // the answer of the hop being read, after the first
  upstream_answer* answer = &first;
  std::string next_body;
  const std::string* body = &first_body;
  int hops = 0;
  for (int hop = 0;; ++hop) {
    auto got = co_await reader.read(*answer, hop);
    if (got.stop) break;
    if (got.calls.empty() || hop >= plan.max_hops || !plan.wire) {
      // The upstream ignored the last hop's tool_choice: those calls are
      // taken out of the client's answer (it never defined read_blob).
      if (!got.calls.empty()) stats.calls_past_hop_limit(got.calls.size());
      note(got, false);
      co_await reader.finish(got);
      break;
    }
    auto results = co_await source.resolve(got.calls);
    const bool last_hop = hop + 1 >= plan.max_hops;
    // The model re-reads (its calls made outputs stay inline) and the client
    // saw nothing of this hop: the turn goes again with them inline, the
    // prefix the next turn sends, instead of with pages the next turn drops.
    // Not as the last hop: the model must still be able to read the rest.
    std::optional<std::string> next;
    if (!last_hop && !reader.showed(got)) next = co_await source.turn_with_rereads_inline();
    if (!next) next = plan.wire->continue_conversation(*body, got.response, plan.tool, results, last_hop);
    if (!next) {
      stats.degraded_mode(degraded::page_in_continue);
      note(got, false);
      co_await reader.finish(got);
      break;
    }
    note(got, true);
    ++hops;
    next_body = std::move(*next);
    body = &next_body;
    if (!co_await reader.before_next_hop()) break;  // the client left
    auto sent = co_await source.send(*body, hop + 1, reader.keepalive());
    if (!sent.answer) {
      co_await reader.fail(*sent.failure);
      break;
    }
    later = std::move(sent.answer);
    answer = later.get();
  }
  co_return hops;
}

}  // namespace gistproxy::proxy
