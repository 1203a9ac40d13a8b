// The offload engine: a request body in, the body to forward out, plus a
// report of what it did (the proxy turns the report into spans and metrics).
//
//   scan     → the wire format finds tool outputs and the tools array
//   decide   → policy: threshold, per-tool rules, budget (oldest first)
//   store    → each chosen output goes to the blob store under its SHA-256
//   splice   → its JSON value is replaced by the reference; read_blob is
//              appended to the tools; every other byte stays identical
//
// Fail-open: a body that does not scan, or an output the store refuses, is
// left as the client sent it and counted in the report.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

#include "rewrite/blob/blob_store.hpp"
#include "rewrite/wire_format.hpp"
#include "rewrite/gist/content_shape.hpp"
#include "rewrite/offload/conversation_record.hpp"
#include "rewrite/offload/policy.hpp"

namespace gistproxy::rewrite {

struct offload_record {
  // The full SHA-256 (hex): a view of `hash_text`, which the output's memo
  // shares from turn to turn (a long conversation re-offloads a few hundred
  // outputs every turn: no copy each). Set both, or neither.
  std::string_view hash;
  std::shared_ptr<const std::string> hash_text;
  std::string tool_name;
  std::string call_id;
  std::string kind;  // json, log, source, text, image/png, …
  std::uint64_t tokens_before = 0;
  std::uint64_t tokens_after = 0;
  std::uint64_t bytes = 0;  // the output's exact size
  bool deduplicated = false;
  std::size_t order = 0;
  std::uint64_t start_ns = 0, end_ns = 0;  // from the injected clock
  // Offloaded by this conversation's previous turn too (as remembered):
  // not new to it.
  bool repeated = false;
  bool aged = false;  // offloaded for its age alone: the model saw it inline before
};

enum class rewrite_outcome { unchanged, rewritten, unparsable };

// What became of one tool output of a request, and why.
enum class output_fate : std::uint8_t {
  offloaded,
  below_threshold,     // too few tokens (or bytes) for its rule
  excluded_by_policy,  // --tool-policy NAME=never
  not_exact,           // not representable exactly: lone surrogates, not UTF-8, bad base64
  too_large,           // over --max-blob-bytes
  store_failed,        // the store refused it (fail-open)
  store_full,          // the store is at its byte bound (--store-max-bytes): left inline (fail-open)
  already_reference,   // a gistproxy reference already (another gistproxy offloaded it)
  not_worth_it,        // --inject-read-blob=auto: offloading would not pay in this conversation (yet)
  read_back,           // the model kept reading it back (conversation_record): inline from then on
};
std::string_view fate_name(output_fate f);

struct rewrite_report {
  rewrite_outcome outcome = rewrite_outcome::unchanged;
  std::vector<offload_record> offloads;
  std::size_t outputs_seen = 0;
  std::size_t skipped_too_large = 0;  // over --max-blob-bytes: left inline, never truncated
  std::size_t skipped_lossy = 0;      // not representable exactly (lone surrogates, not UTF-8, bad base64)
  std::size_t store_failures = 0;     // the store refused: left inline (fail-open)
  std::size_t store_full = 0;         // the store was at its byte bound: left inline (fail-open)
  std::size_t found_damaged = 0;      // stored blobs a put found damaged and replaced (put_result::found_damaged)
  bool store_needed = false;          // output_reuse::may_store was false and a put was needed: run again
  bool tool_injected = false;
  // The request already declares read_blob exactly as gistproxy defines it
  // (forwarded by another gistproxy, or replayed): the model's calls to it are ours.
  bool tool_already_ours = false;
  std::uint64_t tool_tokens = 0;      // estimated tokens of the read_blob definition added
  std::size_t budget_evictions = 0;   // outputs offloaded only to fit --context-budget-tokens
  std::size_t age_offloads = 0;       // outputs offloaded only for their age (below the threshold)
  bool age_batch = false;             // this step's batch was taken (its first turn breaks the prefix)
  bool offer_arrives = false;         // read_blob offered because the newest output pays for it
  std::size_t kept_inline_churn = 0;  // outputs kept inline as the conversation's read-backs ask
  bool churn_batch = false;           // some went back inline this turn (its first turn breaks the prefix)
  std::string tool_name;              // read_blob's name in this request
  std::vector<output_fate> fates;     // one per output the wire format's scan found, in its order
  // --inject-read-blob=auto: why read_blob is offered (head, output_pays,
  // offered_before, already_offered, reference_resolves, age_pays) or
  // not (not_worth); empty in the other modes.
  std::string_view offer_reason;
};

// What the engine derives from an output's bytes: its shape and reference,
// counted once per handle (an exact tokenizer is not cheap per turn).
struct offload_gist {
  content_shape shape;
  std::string tool_name;  // the output's tool the reference names (the same bytes under another tool read otherwise)
  std::string reference;
  std::uint64_t reference_tokens = 0;
  std::string escaped;  // the reference as the inside of a JSON string
};

// What the engine derived from one output's bytes (decoding, UTF-8, SHA-256),
// kept with a conversation's last turn: the next turn re-sends the same bytes
// at the same offsets and gets the same answers without decoding or hashing
// them again (turn_memory.hpp). Keyed by where the output's value lay.
struct output_memo {
  json::range value;
  bool image = false;
  bool exact = false;       // decoded losslessly (text: valid UTF-8, no lone surrogate)
  std::uint64_t bytes = 0;  // decoded size
  // SHA-256 hex; null when the engine never needed it. Shared: every later
  // turn of the conversation carries the same string on, never a copy.
  std::shared_ptr<const std::string> hash;
  // Its gist, when the engine made or found one, and the read_blob name its
  // reference was rendered for. A gist also names the output's tool, which a
  // later turn may change without touching these bytes (the field naming it
  // can follow the output): reuse checks gist->tool_name too.
  std::shared_ptr<const offload_gist> gist;
  std::string gist_for;
  // When the store last confirmed holding these bytes for this tenant (the
  // engine's clock; 0: this turn did not offload them), and its losses()
  // then: a loss since ends the trust.
  std::uint64_t kept_ns = 0;
  std::uint64_t kept_losses = 0;
};

// A previous turn's outputs for this rewrite to reuse where the two bodies
// share every byte of an output's value (the first `same_bytes` bytes), and
// where to record this turn's for the next.
struct output_reuse {
  const std::vector<output_memo>* previous = nullptr;  // ascending value.begin
  std::size_t same_bytes = 0;
  std::vector<output_memo>* learn = nullptr;
  const conversation_items* previous_items = nullptr;  // the wire format's scan of the previous turn's items
  conversation_items* learn_items = nullptr;
  // A pass that may not block on the store: an output that must be stored
  // (not merely kept) ends it with report.store_needed; the caller runs it
  // again where blocking is allowed. Turns that only re-send what is stored
  // then never leave the I/O thread.
  bool may_store = true;
  // What the conversation's earlier turns decided that this one keeps
  // (conversation_record.hpp); null: nothing known.
  const conversation_record* conversation = nullptr;
};

// One replacement the splice made: the client's bytes `at` became the text of
// `shared` (a gist's reference, quoted unless bare) or `owned`. Two turns'
// edits that are alike wrote the same bytes in place of the same bytes.
struct splice_edit {
  json::range at;
  std::string owned;
  std::shared_ptr<const offload_gist> shared;
  bool bare = false;
  std::size_t size() const { return shared ? shared->escaped.size() + (bare ? 0 : 2) : owned.size(); }
  void append_to(std::string& out) const {
    if (!shared) return void(out += owned);
    if (!bare) out += '"';
    out += shared->escaped;
    if (!bare) out += '"';
  }
  bool alike(const splice_edit& o) const {
    if (at.begin != o.at.begin || at.end != o.at.end || bare != o.bare || !shared != !o.shared) return false;
    return shared ? shared == o.shared || shared->escaped == o.shared->escaped : owned == o.owned;
  }
};

struct rewrite_result {
  std::string body;  // empty when outcome != rewritten: forward the original
  rewrite_report report;
  std::vector<splice_edit> edits;  // what the splice replaced, in order (when rewritten)
};

class offload_engine {
 public:
  offload_engine(offload_config cfg, blob_store& store, const token_estimator& estimator,
                 std::function<std::uint64_t()> now_ns = {});
  // `read_ratio`: the cache-read price over the write price of the request's
  // model (cache_read_ratio of its price); the API's usual ratio without one.
  // `threshold_tokens`: this request's own threshold (a client's
  // x-gistproxy-threshold the operator allows); the configured one without.
  // `body` carries the walks' reuse when the turn memory walks it
  // (walk_reuse.hpp); `reuse`: the conversation's previous turn's outputs.
  rewrite_result rewrite(const wire_format& d, json::document body, std::string_view tenant,
                         std::optional<double> read_ratio = std::nullopt,
                         std::optional<std::uint64_t> threshold_tokens = std::nullopt,
                         const output_reuse& reuse = {}) const;
  const offload_config& config() const { return cfg_; }
  const token_estimator& estimator() const { return estimator_; }

  using gist = offload_gist;

 private:
  class pass;  // one request's rewrite, step by step (pass.hpp)
  static constexpr std::size_t max_cached_gists = 4096;
  // Cached per tenant (a shared cache would tell one tenant, by its speed,
  // what another offloaded).
  std::shared_ptr<const gist> gist_of(std::string_view tenant, std::string_view bytes, const std::string& hash,
                                      std::string_view tool_name, const reference_config& ref) const;
  // The cached gist only (nullptr on a miss): the bytes are needed for a miss.
  std::shared_ptr<const gist> cached_gist(std::string_view tenant, const std::string& hash, std::string_view tool_name,
                                          const reference_config& ref) const;
  // read_blob's definition for this API and tool name, and its tokens: built
  // and counted once per thread, engine, API and name, not per request. The
  // count only when `counted` asks for it (a built-in tokenizer's table is
  // built by its first count: tokens/first_use_tokenizer.hpp); the floor of
  // it (tokens::bpe_token_floor) always.
  struct tool_definition {
    std::shared_ptr<const std::string> text;
    std::optional<std::uint64_t> tokens;
    std::uint64_t token_floor = 0;
  };
  tool_definition read_blob_definition(const wire_format& d, const std::string& tool_name, bool counted) const;

  offload_config cfg_;
  std::uint64_t id_;  // never reused: keys per-thread memos, which outlive engines in tests
  blob_store& store_;
  const token_estimator& estimator_;
  std::function<std::uint64_t()> now_ns_;
  mutable std::mutex gist_mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<const gist>> gists_;
};

// Tenant of a request: 16 hex of SHA-256 over its API key, "anonymous" without one.
std::string tenant_of(std::string_view api_key);

}  // namespace gistproxy::rewrite
