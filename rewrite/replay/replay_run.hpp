// Runs recorded requests through the offload engine (the same pipeline as
// `serve`, no network) and measures what gistproxy would have done: tokens
// before and after, offloads per tool, distinct blobs, and prefix stability —
// the share of consecutive turns of a conversation in which the tools, the
// system prompt and every message forwarded on the previous turn are forwarded
// again unchanged (what provider prompt caches need).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "rewrite/cost/prices.hpp"
#include "rewrite/offload/engine.hpp"
#include "rewrite/replay/agent_heads.hpp"
#include "rewrite/replay/trace_formats.hpp"
#include "rewrite/replay/turn_stream.hpp"

namespace gistproxy::rewrite {

struct tool_savings {
  std::uint64_t outputs = 0;    // distinct outputs of this tool seen
  std::uint64_t offloaded = 0;  // distinct outputs offloaded
  std::uint64_t tokens_saved = 0;  // summed over every request that carried them
};

struct replay_stats {
  std::uint64_t turns = 0;  // requests replayed
  std::uint64_t conversations = 0;
  std::uint64_t tokens_before = 0;  // estimated input tokens of the requests as sent
  std::uint64_t tokens_after = 0;   // … as gistproxy would forward them
  std::uint64_t offloads = 0;       // outputs replaced by a reference, summed over requests
  std::uint64_t distinct_blobs = 0;
  std::uint64_t offloaded_bytes = 0;  // exact bytes of the distinct blobs
  std::uint64_t stored_bytes = 0;     // what the store used for them (compressed)
  std::uint64_t unparsable = 0;       // requests left as sent because they did not parse
  // gistproxy recordings only: read_blob hops the model really made (how often
  // offloaded outputs were paged back); other formats cannot know.
  std::uint64_t recorded_page_in_hops = 0;
  // ... and their estimated input, which tokens_after (and the dollars after)
  // include: "with" is every request gistproxy makes, page-ins too.
  std::uint64_t page_in_input_tokens = 0;
  // … and the outputs it read back whole, which the churn tracker hears of as
  // serve's did; outputs then kept inline for it, summed over requests (other
  // formats record no read-back: no churn is simulated for them).
  std::uint64_t recorded_read_backs = 0;
  std::uint64_t kept_inline_churn = 0;
  std::uint64_t prefix_pairs = 0;     // consecutive turns of one conversation
  std::uint64_t prefix_stable_before = 0;  // … whose prefix the client itself kept
  std::uint64_t prefix_stable_after = 0;   // … whose prefix gistproxy's forwarded bodies keep
  std::map<std::string, tool_savings> by_tool;
  // What replay could not see or use, so a low figure explains itself:
  // requests rebuilt from a message list (no system prompt or tools unless the
  // format recorded them), and distinct tool outputs never offloaded, by why
  // (fate_name: below_threshold, excluded_by_policy, not_exact, too_large,
  // store_failed). Server-side tool results (web search/fetch, MCP connector)
  // are not client tool outputs and are not counted.
  std::uint64_t rebuilt_requests = 0;
  std::map<std::string, std::uint64_t> not_offloaded;
  // The provider's prompt cache, simulated per conversation: a turn's longest
  // unchanged prefix since the previous turn is read from the cache, the rest
  // of its input written. Input-side dollars at each model's prices; turns
  // whose model has no price are counted, never priced at $0.
  std::uint64_t cache_read_tokens_before = 0;
  std::uint64_t cache_read_tokens_after = 0;
  double cost_usd_before = 0;
  double cost_usd_after = 0;
  // Conversations that cost more with gistproxy: in dollars where priced,
  // else in input tokens; the parts whose sums are the totals above.
  std::uint64_t conversations_costing_more = 0;
  bool costs_more() const { return priced_turns ? cost_usd_after > cost_usd_before : tokens_after > tokens_before; }
  std::uint64_t priced_turns = 0;
  std::uint64_t unpriced_turns = 0;
  // Of the priced turns, those whose model the table does not list, priced
  // as its family's nearest older entry: an estimate, so the report names
  // which entry priced which model (at most priced_as_limit models).
  std::uint64_t fallback_priced_turns = 0;
  std::map<std::string, std::string> priced_as;
  static constexpr std::size_t priced_as_limit = 16;
  // The head (tools and system prompt) assumed for each trace part, and the
  // turns replayed with it: requests rebuilt from messages lack it unless a
  // flag or the format's estimate supplies one (agent_heads.hpp).
  struct head_use {
    head_choice choice;
    std::uint64_t turns = 0;
  };
  std::map<std::string, head_use> heads;  // by why, tokens and agent

  double saved_share() const { return tokens_before ? 1.0 - double(tokens_after) / double(tokens_before) : 0.0; }
  double dedupe_ratio() const { return offloads ? 1.0 - double(distinct_blobs) / double(offloads) : 0.0; }
  double prefix_stability_before() const { return prefix_pairs ? double(prefix_stable_before) / double(prefix_pairs) : 1.0; }
  double prefix_stability_after() const { return prefix_pairs ? double(prefix_stable_after) / double(prefix_pairs) : 1.0; }
  double cache_read_share_before() const { return tokens_before ? double(cache_read_tokens_before) / double(tokens_before) : 0.0; }
  double cache_read_share_after() const { return tokens_after ? double(cache_read_tokens_after) / double(tokens_after) : 0.0; }
  void add(const replay_stats& o);
};

// One replayed request, for callers that write spans or compare bodies.
struct replayed_request {
  const recorded_request* recorded = nullptr;
  const endpoint* api = nullptr;
  std::string conversation_key;
  // The body gistproxy would forward (the original when unchanged), valid
  // during the callback only.
  std::string_view forwarded;
  rewrite_report report;
  std::string conversation;  // its id, 32 hex (the trace id its spans get)
  bool retry = false;        // its conversation's latest turn sent again
};

// Whether `cur` forwards again, unchanged, the tools, system prompt and every
// message of `prev` (both request bodies of one API, read by its layout).
bool keeps_prefix(std::string_view prev, std::string_view cur, const prefix_layout& layout);

class replayer;

// One trace fed in parts (a directory's files, one at a time) and measured as
// a whole: conversations continue across parts. Memory holds one part at a
// time plus, per conversation, its last turn.
class replay_session {
 public:
  replay_session(const replayer& r, std::string tenant, std::function<void(const replayed_request&)> on_request = {});
  ~replay_session();
  replay_session(const replay_session&) = delete;
  replay_session& operator=(const replay_session&) = delete;
  // The heads rebuilt requests are given (none unless set).
  void assume_heads(head_policy policy) { heads_ = policy; }
  void feed(const recorded_trace& part);
  replay_stats finish();

 private:
  struct state;
  void replay_one(const recorded_request& req);
  void identify(const recorded_request& req, const endpoint& d, std::string_view body, replayed_request& out);
  void tell_churn(const recorded_request& req, const replayed_request& out, bool offered);
  struct hop_input {
    std::uint64_t input = 0, cached = 0;
  };
  hop_input page_in_hops_of(const replayed_request& out, std::uint64_t input_after) const;
  void measure_turn(const endpoint& d, std::string_view body, const replayed_request& out, const std::string& model,
                    const std::vector<splice_edit>& edits);
  const replayer& replayer_;
  std::string tenant_;
  std::function<void(const replayed_request&)> on_request_;
  head_policy heads_;
  std::unique_ptr<state> state_;
};

class replayer {
 public:
  replayer(const offload_engine& engine, blob_store& store, const token_estimator& estimator,
           const price_table* prices = nullptr)
      : engine_(engine), store_(store), estimator_(estimator), prices_(prices) {}
  replay_stats run(const recorded_trace& trace, std::string_view tenant,
                   const std::function<void(const replayed_request&)>& on_request = {}) const;
  // Consecutive turns reuse what the previous one learned (turn_stream.hpp);
  // false replays every turn from its first byte (the reference the reuse is
  // tested against). `work`, when set, counts what replay read and wrote.
  void reuse_turns(bool on) { reuse_turns_ = on; }
  void count_work(replay_work* work) { work_ = work; }

 private:
  friend class replay_session;
  const offload_engine& engine_;
  blob_store& store_;
  const token_estimator& estimator_;
  const price_table* prices_;
  bool reuse_turns_ = true;
  replay_work* work_ = nullptr;
};

}  // namespace gistproxy::rewrite
