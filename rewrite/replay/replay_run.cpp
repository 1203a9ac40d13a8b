#include "rewrite/replay/replay_run.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "rewrite/blob/digest.hpp"
#include "rewrite/json/checked.hpp"
#include "rewrite/json/scanner.hpp"
#include "rewrite/conversation/conversation_chains.hpp"
#include "rewrite/page_in/churn_tracker.hpp"
#include "rewrite/upstream_route.hpp"

namespace gistproxy::rewrite {

void replay_stats::add(const replay_stats& o) {
  turns += o.turns;
  conversations += o.conversations;
  tokens_before += o.tokens_before;
  tokens_after += o.tokens_after;
  offloads += o.offloads;
  distinct_blobs += o.distinct_blobs;
  offloaded_bytes += o.offloaded_bytes;
  stored_bytes += o.stored_bytes;
  unparsable += o.unparsable;
  recorded_page_in_hops += o.recorded_page_in_hops;
  recorded_read_backs += o.recorded_read_backs;
  kept_inline_churn += o.kept_inline_churn;
  prefix_pairs += o.prefix_pairs;
  prefix_stable_before += o.prefix_stable_before;
  prefix_stable_after += o.prefix_stable_after;
  cache_read_tokens_before += o.cache_read_tokens_before;
  cache_read_tokens_after += o.cache_read_tokens_after;
  cost_usd_before += o.cost_usd_before;
  cost_usd_after += o.cost_usd_after;
  page_in_input_tokens += o.page_in_input_tokens;
  conversations_costing_more += o.conversations_costing_more;
  priced_turns += o.priced_turns;
  unpriced_turns += o.unpriced_turns;
  fallback_priced_turns += o.fallback_priced_turns;
  for (const auto& [model, entry] : o.priced_as)
    if (priced_as.size() < priced_as_limit) priced_as.emplace(model, entry);
  rebuilt_requests += o.rebuilt_requests;
  for (const auto& [key, use] : o.heads) {
    auto& h = heads[key];
    h.choice = use.choice;
    h.turns += use.turns;
  }
  for (const auto& [why, n] : o.not_offloaded) not_offloaded[why] += n;
  for (const auto& [tool, s] : o.by_tool) {
    auto& t = by_tool[tool];
    t.outputs += s.outputs;
    t.offloaded += s.offloaded;
    t.tokens_saved += s.tokens_saved;
  }
}

bool keeps_prefix(std::string_view prev, std::string_view cur, const prefix_layout& layout) {
  auto a = split_prefix(prev, layout), b = split_prefix(cur, layout);
  return a && b && keeps_prefix(*a, *b);
}

namespace {

// Input-side cost of one turn: the cached prefix at the cache-read price, the
// rest at the cache-write price (the input price where the API bills no writes).
double input_side_cost(std::uint64_t input, std::uint64_t cached, const model_price& p) {
  return (double(cached) * p.cache_read + double(input - cached) * p.cache_write) * 1e-6;
}

// A model name as the report prints it: the trace wrote it, so bytes a
// terminal or a JSON encoder would trip on become '?'.
std::string printable_name(std::string_view name) {
  std::string out(name);
  for (auto& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  return out;
}

}  // namespace

struct replay_session::state {
  explicit state(const replayer& r) : stream(r.estimator_, r.work_, r.reuse_turns_) {}
  replay_stats st;
  std::uint64_t stored_at_start = 0;
  // conversation → the previous turn's prefix (sent, forwarded): hashes and
  // places, never the bodies; nullopt where a body did not parse
  std::unordered_map<std::string, std::pair<std::optional<prefix_parts>, std::optional<prefix_parts>>> last_turn;
  std::unordered_set<std::string> blobs;
  std::unordered_map<std::string, std::unordered_set<std::string>> seen_outputs, offloaded_outputs;  // tool → keys
  std::unordered_map<std::string, output_fate> fates;  // output key → what became of it (offloaded once wins)
  // conversation → what later turns keep (read_blob offered, outputs inline
  // for churn), kept by the same tracker as serve's and told the same things
  churn_tracker churn{std::size_t(1) << 30};
  conversation_chains chains;  // which conversation a turn is, as serve decides it
  // conversation → its input tokens and dollars before and after: the parts
  // whose sums are the totals (conversations_costing_more)
  struct conversation_cost {
    std::uint64_t tokens_before = 0, tokens_after = 0;
    double usd_before = 0, usd_after = 0;
  };
  std::unordered_map<std::string, conversation_cost> costs;
  turn_stream stream;  // what the previous turn learned, for this one
};

replay_session::replay_session(const replayer& r, std::string tenant, std::function<void(const replayed_request&)> on_request)
    : replayer_(r), tenant_(std::move(tenant)), on_request_(std::move(on_request)), state_(std::make_unique<state>(r)) {
  state_->stored_at_start = replayer_.store_.stats().stored_bytes;
}

replay_session::~replay_session() = default;

void replay_session::feed(const recorded_trace& part) {
  const auto turns_before = state_->st.turns;
  const auto head = choose_head(heads_, part.rebuilt, part.format);
  state_->stream.set_head(head.tokens);
  for (const auto& req : part.requests)
    if (req.api) replay_one(req);
  if (part.rebuilt) state_->st.rebuilt_requests += state_->st.turns - turns_before;
  auto& use = state_->st.heads[std::string(why_name(head.reason)) + " " + std::to_string(head.tokens) + " " + head.estimate.agent];
  use.choice = head;
  use.turns += state_->st.turns - turns_before;
  state_->stream.reset();  // the part's bodies go
}

void replay_session::replay_one(const recorded_request& req) {
  auto& s = *state_;
  auto& st = s.st;
  auto& stream = s.stream;
  const auto& engine = replayer_.engine_;
  const endpoint* d = req.api;
  ++st.turns;
  st.recorded_page_in_hops += std::uint64_t(std::max(0, req.page_in_hops));
  const std::string_view body = stream.body_of(req);
  replayed_request out;
  out.recorded = &req;
  out.api = d;
  std::string model;
  if (auto facts = [&] { auto scope = stream.body_scope(body); return d->wire().inspect(scope.bytes()); }()) {
    // Gemini and the clouds name the model there (under a gateway's mount, too).
    if (!req.target.empty()) d->inspect_target(gateway_mount_of(req.target).target, *facts);
    out.conversation_key = facts->conversation_key;
    model = facts->model;
    identify(req, *d, body, out);
  }

  request_scan scan;
  scan.text_results_from = engine.config().text_tool_results;
  stream.reuse_in(scan);
  std::vector<std::string> keys;
  if ([&] { auto scope = stream.body_scope(body); return d->wire().scan(scope.bytes(), scan); }())
    for (const auto& o : scan.outputs) {
      keys.push_back(stream.output_key(o));
      s.seen_outputs[o.tool_name.empty() ? std::string("(unknown)") : std::string(o.tool_name)].insert(keys.back());
    }

  std::optional<double> read_ratio;
  if (replayer_.prices_)
    if (auto price = replayer_.prices_->find(model)) read_ratio = cache_read_ratio(*price);
  const auto record = s.churn.record(out.conversation);
  auto result = [&] {
    auto scope = stream.body_scope(body);
    auto reuse = stream.engine_reuse();
    reuse.conversation = &record;
    return engine.rewrite(d->wire(), scope.bytes(), tenant_, read_ratio, std::nullopt, reuse);
  }();
  out.report = std::move(result.report);
  tell_churn(req, out, record.offered);
  for (std::size_t i = 0; i < keys.size() && i < out.report.fates.size(); ++i) {
    auto [f, added] = s.fates.try_emplace(keys[i], out.report.fates[i]);
    if (!added && f->second != output_fate::offloaded) f->second = out.report.fates[i];
  }
  const bool rewritten = out.report.outcome == rewrite_outcome::rewritten;
  out.forwarded = rewritten ? std::string_view(result.body) : body;
  if (out.report.outcome == rewrite_outcome::unparsable) ++st.unparsable;

  for (const auto& o : out.report.offloads) {
    auto tool = o.tool_name.empty() ? std::string("(unknown)") : o.tool_name;
    ++st.offloads;
    if (s.blobs.insert(std::string(o.hash)).second) st.offloaded_bytes += o.bytes;
    s.offloaded_outputs[tool].insert(std::string(o.hash));
    st.by_tool[tool].tokens_saved += o.tokens_before > o.tokens_after ? o.tokens_before - o.tokens_after : 0;
  }
  static const std::vector<splice_edit> no_edits;
  measure_turn(*d, body, out, model, rewritten ? result.edits : no_edits);
  if (on_request_) on_request_(out);
  stream.finish_turn();
}

// The conversation of a turn, as serve names it (receive.cpp): a recording
// says which serve chose (its credential included); otherwise the opening,
// without a credential, and the chain of turns the body extends. Either way
// the chain says whether the turn is a retry of its conversation's latest.
void replay_session::identify(const recorded_request& req, const endpoint& d, std::string_view body,
                              replayed_request& out) {
  const auto recorded_id = conversation_from_hex(req.conversation_id);
  const bool recorded = recorded_id.has_value();
  auto opening = recorded ? *recorded_id : opening_of(out.conversation_key);
  auto fp = [&] { auto scope = state_->stream.body_scope(body); return fingerprint_prefix(scope.bytes(), d.wire().cache_prefix()); }();
  if (fp) {
    const auto turn = state_->chains.resolve(opening, {fp->head, fp->cumulative});
    if (!recorded) opening = turn.id;
    out.retry = turn.retry;
  }
  out.conversation = recorded ? req.conversation_id : conversation_hex(opening);
}

// What serve tells its churn tracker after a turn (rewrite_phase.cpp, and
// blob_pager.cpp for the model's read-backs, which recordings keep).
void replay_session::tell_churn(const recorded_request& req, const replayed_request& out, bool offered) {
  auto& s = *state_;
  const auto& conversation = out.conversation;
  const auto& report = out.report;
  const auto turn = s.churn.begin_turn(conversation, out.retry);
  std::vector<std::string_view> fresh;
  std::vector<std::uint8_t> aged;
  for (const auto& o : report.offloads)
    if (!o.repeated) fresh.push_back(o.hash), aged.push_back(o.aged);
  std::vector<bool> first;
  s.churn.offloaded(conversation, fresh, turn, first, report.offloads.size() - fresh.size(), aged);
  if (!offered && (report.tool_injected || report.tool_already_ours)) s.churn.note_offered(conversation);
  s.st.kept_inline_churn += report.kept_inline_churn;
  const auto max_read_backs = replayer_.engine_.config().max_read_backs;
  for (const auto& hash : req.read_backs) {
    ++s.st.recorded_read_backs;
    s.churn.read_back(conversation, hash, turn, max_read_backs);
  }
}

// The ledger's "with" counts gistproxy's own page-in hops (ledger.hpp): a
// recording says how many a turn made and which outputs it read back whole.
// Each hop sends the forwarded body again, read from the cache the hop
// before wrote, plus the outputs read back, priced uncached. Outputs
// read by a pattern or a line range are not recorded: a lower bound.
replay_session::hop_input replay_session::page_in_hops_of(const replayed_request& out, std::uint64_t input_after) const {
  const int hops = out.recorded ? std::max(0, out.recorded->page_in_hops) : 0;
  if (hops == 0) return {};
  std::uint64_t read_back = 0;
  for (const auto& hash : out.recorded->read_backs)
    for (const auto& o : out.report.offloads)
      if (o.hash == hash) {
        read_back += o.tokens_before;
        break;
      }
  return {std::uint64_t(hops) * (input_after + read_back), std::uint64_t(hops) * input_after};
}

// A turn's input tokens as sent and as forwarded, the provider's prompt cache
// simulated against the conversation's previous turn, and their dollars.
void replay_session::measure_turn(const endpoint& d, std::string_view body, const replayed_request& out,
                                  const std::string& model, const std::vector<splice_edit>& edits) {
  auto& s = *state_;
  auto& st = s.st;
  auto& stream = s.stream;
  const bool rewritten = out.forwarded.data() != body.data();
  const auto input_before = stream.count_body(body);
  const auto input_after = stream.count_forwarded(out.forwarded, edits);
  st.tokens_before += input_before;
  st.tokens_after += input_after;

  const auto layout = d.wire().cache_prefix();
  auto sent = [&] { auto scope = stream.body_scope(body); return split_prefix(scope.bytes(), layout); }();
  auto forwarded = rewritten ? stream.split_forwarded(out.forwarded, layout) : sent;
  auto [it, first] = s.last_turn.try_emplace(out.conversation);
  std::uint64_t cached_before = 0, cached_after = 0;
  if (!first) {
    ++st.prefix_pairs;
    const auto& [prev_sent, prev_forwarded] = it->second;
    auto tokens_in = [&stream](std::string_view text, bool as_forwarded) {
      return [&stream, text, as_forwarded](json::range r) { return stream.part_tokens(text, r, as_forwarded); };
    };
    if (prev_sent && sent) {
      if (keeps_prefix(*prev_sent, *sent)) ++st.prefix_stable_before;
      cached_before = std::min(input_before, shared_prefix(*prev_sent, *sent, tokens_in(body, false)));
    }
    if (prev_forwarded && forwarded) {
      if (keeps_prefix(*prev_forwarded, *forwarded)) ++st.prefix_stable_after;
      cached_after = std::min(input_after, shared_prefix(*prev_forwarded, *forwarded, tokens_in(out.forwarded, true)));
    }
  }
  st.cache_read_tokens_before += cached_before;
  st.cache_read_tokens_after += cached_after;
  const auto hops = page_in_hops_of(out, input_after);
  st.tokens_after += hops.input;
  st.cache_read_tokens_after += hops.cached;
  st.page_in_input_tokens += hops.input;
  auto& cost = s.costs[out.conversation];
  cost.tokens_before += input_before;
  cost.tokens_after += input_after + hops.input;
  std::optional<price_match> price;
  if (replayer_.prices_) price = replayer_.prices_->lookup(model);
  if (price) {
    ++st.priced_turns;
    const double before = input_side_cost(input_before, cached_before, price->price);
    const double after = input_side_cost(input_after, cached_after, price->price) +
                         input_side_cost(hops.input, hops.cached, price->price);
    st.cost_usd_before += before;
    st.cost_usd_after += after;
    cost.usd_before += before;
    cost.usd_after += after;
    if (price->fallback) {
      ++st.fallback_priced_turns;
      if (st.priced_as.size() < replay_stats::priced_as_limit)
        st.priced_as.emplace(printable_name(base_model_name(model)), price->priced_as);
    }
  } else {
    ++st.unpriced_turns;
  }
  it->second = {std::move(sent), std::move(forwarded)};
}

replay_stats replay_session::finish() {
  auto& s = *state_;
  auto st = std::move(s.st);
  st.conversations = s.last_turn.size();
  for (const auto& [conversation, c] : s.costs)
    if (c.usd_before > 0 ? c.usd_after > c.usd_before : c.tokens_after > c.tokens_before) ++st.conversations_costing_more;
  for (const auto& [key, fate] : s.fates)
    if (fate != output_fate::offloaded) ++st.not_offloaded[std::string(fate_name(fate))];
  st.distinct_blobs = s.blobs.size();
  st.stored_bytes = replayer_.store_.stats().stored_bytes - s.stored_at_start;
  for (const auto& [tool, keys] : s.seen_outputs) st.by_tool[tool].outputs = keys.size();
  for (const auto& [tool, keys] : s.offloaded_outputs) st.by_tool[tool].offloaded = keys.size();
  state_ = std::make_unique<state>(replayer_);
  return st;
}

replay_stats replayer::run(const recorded_trace& trace, std::string_view tenant,
                           const std::function<void(const replayed_request&)>& on_request) const {
  replay_session session(*this, std::string(tenant), on_request);
  session.feed(trace);
  return session.finish();
}

}  // namespace gistproxy::rewrite
