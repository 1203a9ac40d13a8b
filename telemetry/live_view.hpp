// The admin listener's live view, as pure logic: the recent conversations
// (their turns' offloads and page-ins, joined by conversation_join as
// `gistproxy report` joins spans), a per-minute series of the totals, and the
// JSON the page and scripts read. Everything is bounded: a fixed number of
// conversations, of turns per conversation and of details per turn; what
// does not fit is counted. Only handles, sizes, kinds, tool names and shapes
// are kept: never an output's bytes, a prompt or a key. Every
// string is kept bounded and as valid UTF-8 (keep_text), so no client's
// model or tool name can grow the ledger or make its JSON unserialisable.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewrite/cost/ledger.hpp"
#include "telemetry/conversation_join.hpp"

namespace gistproxy::telemetry::live {

// What keep_text changed of outside text, counted for the summary.
struct text_marks {
  std::uint64_t cut = 0;       // longer than its bound: cut, ending in "…"
  std::uint64_t repaired = 0;  // held invalid UTF-8: those bytes are U+FFFD
};

// `s` as the view keeps it: at most `max_bytes` bytes of valid UTF-8
// (rewrite::text::bounded_utf8); what it changed is counted into `marks`.
std::string keep_text(std::string_view s, std::size_t max_bytes, text_marks& marks);

struct offload_detail {
  std::string handle, tool, kind;
  std::uint64_t bytes = 0, tokens_before = 0, tokens_after = 0;
};

struct page_in_detail {
  std::string handle, tool;
  std::string shape;   // the arguments' shape: full, pattern or range
  std::string result;  // ok, not_found, integrity, bad_request, …
  std::uint64_t hop = 0;  // the upstream hop whose read_blob call it answered (1-based)
  bool integrity_ok = true;
  std::uint64_t bytes = 0, tokens = 0;
};

// One finished request of a conversation, as the hot path hands it over.
struct turn_event {
  std::string trace_id;  // 32 lowercase hex
  std::string api, model, group;
  std::uint64_t unix_ms = 0;
  int status = 0;
  std::uint64_t input_tokens = 0;  // as the upstream reported (all hops)
  std::uint64_t offloads = 0, tokens_before = 0, tokens_after = 0;  // every offload of the turn
  std::uint64_t kept_inline = 0;  // outputs kept inline because the conversation re-reads (cause="churn")
  rewrite::ledger_entry ledger;   // what "saved" means: without and with, from the provider's usage
  bool in_ledger = false;         // an upstream answered: the ledger counters took `ledger`
  std::string tenant;             // whose request (the store's tenant name, never a credential)
  std::vector<offload_detail> new_offloads;  // those new to the conversation, at most details_per_turn
  std::uint64_t new_offloads_dropped = 0;
  std::vector<page_in_detail> page_ins;  // at most details_per_turn
  std::uint64_t page_ins_dropped = 0;
  text_marks marks;  // what the hot path's keep_text changed
};

struct limits {
  std::size_t conversations = 200;       // kept, least recently seen evicted first
  std::size_t turns = 64;                // kept per conversation, oldest evicted first
  std::size_t handles = 4096;            // joined per conversation
  std::size_t details_per_turn = 32;     // offloads and page-ins kept per turn (the hot path caps too)
  std::size_t max_model_bytes = 64;
  std::size_t max_tool_bytes = 128;      // a tool name (offloads, page-ins, the join)
  std::size_t max_handle_bytes = 80;     // a handle: ours, or whatever a model's read_blob call named
  std::size_t max_label_bytes = 32;      // api, group, kind, shape, result
  std::size_t max_bytes = 32u << 20;     // the whole ledger (estimated): past it, least recently seen evicted
};

struct drops {
  std::uint64_t events = 0;          // not queued (queue full): set by the owner
  std::uint64_t conversations = 0;   // evicted
  std::uint64_t turns = 0;           // evicted from a kept conversation
  std::uint64_t details = 0;         // offloads or page-ins counted but not kept
  std::uint64_t handles = 0;         // not joined (handles limit)
  text_marks text;                   // strings cut or repaired before they were kept
};

class conversation_ledger {
 public:
  explicit conversation_ledger(limits l = {}) : limits_(l) {}
  // Events arrive in the order their requests finished.
  void add(turn_event e);
  // Newest first, at most `max`.
  nlohmann::json conversations_json(std::size_t max) const;
  // One conversation's turns (oldest first); nullopt when not kept.
  std::optional<nlohmann::json> conversation_json(const std::string& trace_id) const;
  drops dropped() const { return drops_; }
  std::size_t size() const { return index_.size(); }
  std::size_t bytes() const { return bytes_; }  // estimated memory of what is kept

 private:
  struct page_in_row {
    page_in_detail d;
    std::optional<churn_pair> churn;
  };
  struct turn_row {
    std::uint64_t n = 0, unix_ms = 0, input_tokens = 0, offloads = 0, offloaded_tokens = 0, kept_inline = 0;
    int status = 0;
    rewrite::ledger_entry ledger;
    std::vector<offload_detail> offloads_kept;
    std::uint64_t offloads_not_kept = 0, page_ins_not_kept = 0;
    std::vector<page_in_row> page_ins;
    std::size_t bytes = 0;  // estimated
  };
  struct conversation {
    std::string trace_id, api, model, group;
    std::uint64_t turns = 0, first_ms = 0, last_ms = 0;
    std::uint64_t offloads = 0, offloaded_tokens = 0, page_ins = 0, churn = 0, integrity_failures = 0;
    std::uint64_t kept_inline = 0;  // its turns' kept_inline: outputs held back for its churn
    rewrite::ledger_total ledger;   // its turns' entries
    std::deque<turn_row> kept;
    conversation_join join;
    std::size_t bytes = 0;  // estimated: itself, its kept turns and its join
  };
  using lru = std::list<conversation>;
  void clean(turn_event& e);
  conversation& touch(const turn_event& e);
  void evict_least_recent();
  nlohmann::json summary_of(const conversation& c) const;

  limits limits_;
  drops drops_;
  lru recent_;  // most recently seen first
  std::unordered_map<std::string, lru::iterator> index_;
  std::size_t bytes_ = 0;
};

// Tokens sent and saved, page-ins and churn per minute over the last
// `minutes`, from samples of totals counted since start (deltas; a total
// that goes down is read as a restart of that total, not a negative minute).
struct series_totals {
  std::uint64_t sent = 0, saved = 0, page_ins = 0, churn = 0;
};

class minute_series {
 public:
  explicit minute_series(std::size_t minutes = 60) : buckets_(minutes) {}
  void observe(std::uint64_t unix_ms, const series_totals& totals);
  // Oldest first, one entry per minute ending at `unix_ms`'s minute.
  nlohmann::json to_json(std::uint64_t unix_ms) const;

 private:
  struct bucket {
    std::uint64_t minute = UINT64_MAX;
    series_totals sum;
  };
  std::vector<bucket> buckets_;
  series_totals last_;  // totals are counted since start: the first sample's delta is from zero
};

// Totals since start, read from the metric registry by the owner: the page's
// numbers are /metrics' numbers.
struct totals {
  std::uint64_t requests = 0, input_tokens = 0, tokens_before = 0, tokens_after = 0;
  std::uint64_t cache_read_tokens = 0, cache_reported_tokens = 0;  // the input tokens whose cache split was reported
  double saved_usd = 0, overhead_usd = 0;  // the offload estimate's parts (gistproxy_saved_usd_total, ..._overhead_)
  // The ledger (gistproxy_ledger_*): the one "saved" every meter shows.
  std::uint64_t input_without = 0, input_with = 0, unmeasured_requests = 0;
  double usd_without = 0, usd_with = 0;
  std::uint64_t unpriced_requests = 0;  // left out of every dollar figure: their model has no price
  std::uint64_t offloads = 0, page_ins = 0, churn = 0, integrity_failures = 0;
  std::uint64_t kept_inline_churn = 0;  // gistproxy_outputs_kept_inline_total{cause="churn"}
  std::map<std::string, std::uint64_t> rewrite_failures;  // by reason
  struct group_totals {
    std::uint64_t requests = 0, input_tokens = 0;
    double cost_usd = 0;
  };
  std::map<std::string, group_totals> groups;  // treated, control
  std::uint64_t tokens_saved() const { return tokens_before > tokens_after ? tokens_before - tokens_after : 0; }
};

nlohmann::json summary_json(const totals& t, const minute_series& series, const drops& d, std::uint64_t unix_ms,
                            std::uint64_t started_unix_ms);

// A trace id as the URL names it: exactly 32 lowercase hex digits.
bool valid_trace_id(std::string_view s);

}  // namespace gistproxy::telemetry::live
