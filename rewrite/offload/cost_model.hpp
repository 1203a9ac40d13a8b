// Whether offering read_blob (and offloading) pays in a conversation, in the
// provider's own prompt-cache pricing (--inject-read-blob=auto). Pure
// arithmetic on token counts; the engine measures them.
//
// Units are tokens at the cache-write price (the price of input that is not
// read from the cache; for OpenAI and Gemini that is the plain input price).
// `read_ratio` is the cache-read price over that price (Anthropic 0.1/1.25,
// OpenAI 0.1, Gemini 0.25).
//
// Two ways to pay:
//  1. From the start. The definition costs `definition` tokens on every turn;
//     when that is at most `max_overhead` of the request's stable head (tools,
//     system prompt, first message: what every turn of the conversation
//     carries), read_blob is offered from the first turn and no turn can cost
//     more than that share: it never arrives late, so never rewrites a cached
//     prefix. Coding agents (large tools and system prompts) are here.
//  2. When an output pays for the late arrival. Otherwise read_blob is offered
//     from the first output whose arrival turn pays for it on that turn
//     alone: the tools change, so the cached prefix before it (`prefix`
//     tokens) is written again at the write price instead of read, plus the
//     definition, plus the page-ins expected (`page_in_rate` per output, each
//     a hop re-reading the prefix from the cache); against the output's own
//     saving (written now) and the earlier outputs' (read from the cache
//     otherwise). Every later turn then saves more than the definition costs.
// The decision for an output depends only on the conversation up to it, which
// every later turn carries unchanged, so once read_blob is offered it stays
// offered: the prefix never flips back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "rewrite/json/scanner.hpp"

namespace gistproxy::rewrite {

struct cost_model_config {
  double max_overhead = 0.005;  // the definition's share of the stable head that is paid from the start
  double page_in_rate = 0.1;    // expected read_blob hops per offloaded output
};

struct offload_point {
  std::uint64_t prefix_tokens = 0;  // tokens of the request before this output
  std::uint64_t saving_tokens = 0;  // its tokens less its reference's
};

struct offer_decision {
  enum class why { head, output_pays, not_worth } reason = why::not_worth;
  bool offer() const { return reason != why::not_worth; }
  std::size_t first_paying = 0;  // output_pays: the index of the output that paid
};

// `points` in the order the outputs appear in the request (oldest first).
offer_decision decide_offer(const cost_model_config& cfg, std::uint64_t head_tokens, std::uint64_t definition_tokens,
                            double read_ratio, const std::vector<offload_point>& points);

// Age-aware offload: past `trigger_tokens` of conversation, older outputs go
// down to `threshold_tokens`, except the last `keep_tokens` of the
// conversation. Stateless and cache-stable: the line below which outputs go
// (the watermark) is a function of the conversation's own prefix, and moves
// only once per `step_tokens` of growth, by a whole batch, and only when the
// batch pays for the prefix-cache rewrite it causes.
struct age_config {
  std::uint64_t trigger_tokens = 0;  // 0: off
  std::uint64_t threshold_tokens = 500;
  std::uint64_t keep_tokens = 16000;
  std::uint64_t step_tokens = 16000;
  std::uint64_t max_horizon_turns = 100;  // cap on the later turns a batch is expected to save on
  // cost: a batch goes when it pays in cache pricing (below); tokens: every
  // batch goes, still once per step (for operators bound by the context
  // window more than by the bill).
  enum class gate : std::uint8_t { cost, tokens } decide = gate::cost;
};

struct aged_output {
  std::uint64_t begin_tokens = 0, end_tokens = 0;  // where it lies in the client's body (bytes/4)
  std::uint64_t saving_tokens = 0;                 // its tokens less its reference's; 0: it stays (a turn all the same)
  std::uint64_t offloaded_saving = 0;              // offloaded anyway (over the threshold): what the forwarded body lacks
};

// The watermark (in the client's body, tokens): outputs that end at or
// before it are offloaded for their age; 0: none. `outputs`: every tool
// output of the request, in body order (each one a turn of the agent).
//
// Batch k happens when the body first reaches trigger + (k-1)*step tokens
// (`reach`); it takes the outputs not yet taken that end before reach - keep.
// It breaks the cached prefix at its first output: everything after it, up
// to the body's size by the next step, less what is offloaded in it (the
// forwarded body is what the cache holds), is written again instead of read
// ((1 - rho) per token, rho the read/write price ratio), plus its expected
// page-ins. It pays when its saving, read from the cache on each later turn
// (rho per token), over the expected later turns (as many as the outputs
// before reach, capped: a conversation that has run n tool calls is
// expected to run about n more) covers that. A batch that does not pay
// joins the next one. Every input is fixed by the prefix up to reach, so a
// later turn decides each batch the same way.
//
// `arrival_definition` > 0: read_blob is not on offer yet, and the first
// batch brings it: that batch rewrites the whole prefix (the tools come
// first) and pays the definition on every later turn too.
std::uint64_t age_watermark(const age_config& age, const cost_model_config& cost, double read_ratio,
                            std::uint64_t body_tokens, const std::vector<aged_output>& outputs,
                            std::uint64_t arrival_definition = 0);

// Bytes of the request every turn carries unchanged: everything but the
// conversation list, plus its first item (from the wire format's scan: the list's
// range and where its second item starts, 0 with fewer than two items).
std::size_t stable_head_bytes(std::size_t body_bytes, std::optional<json::range> conversation,
                              std::size_t second_item_begin);

// Bytes that precede body offset `at` in a provider's cache order, where
// everything outside the conversation list (tools, system prompt, settings)
// comes first whatever the members' order in the JSON: a client may send its
// tools after its messages (Codex CLI sends `input` before `tools`), and the
// cached prefix an output's offload rewrites still holds them. `at` outside
// the list (or no list): `at` itself.
std::size_t cache_order_offset(std::size_t body_bytes, std::optional<json::range> conversation, std::size_t at);

}  // namespace gistproxy::rewrite
