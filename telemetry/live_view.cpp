#include "telemetry/live_view.hpp"

#include <algorithm>

#include "rewrite/text/utf8.hpp"

namespace gistproxy::telemetry::live {
namespace {

std::uint64_t saved(std::uint64_t before, std::uint64_t after) { return before > after ? before - after : 0; }

// Estimated memory of what the ledger keeps: the strings plus a fixed cost
// per node (allocation headers, list and hash-map links).
constexpr std::size_t node_bytes = 64;

std::size_t row_bytes(const offload_detail& o) {
  return sizeof o + o.handle.size() + o.tool.size() + o.kind.size();
}
std::size_t row_bytes(const page_in_detail& p) {
  // Its churn pair copies the handle and the tool once more.
  return sizeof p + 2 * (p.handle.size() + p.tool.size()) + p.shape.size() + p.result.size() + node_bytes;
}

nlohmann::json offload_json(const offload_detail& o) {
  return {{"handle", o.handle}, {"tool", o.tool}, {"kind", o.kind}, {"bytes", o.bytes},
          {"tokens_before", o.tokens_before}, {"tokens_after", o.tokens_after}};
}

}  // namespace

std::string keep_text(std::string_view s, std::size_t max_bytes, text_marks& marks) {
  auto b = rewrite::text::bounded_utf8(s, max_bytes);
  marks.cut += b.cut;
  marks.repaired += b.repaired;
  return std::move(b.text);
}

bool valid_trace_id(std::string_view s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// Whatever the producer did, every string is bounded and valid UTF-8
// before it is kept (idempotent for what the hot path already cleaned).
void conversation_ledger::clean(turn_event& e) {
  auto& m = e.marks;
  const auto label = [&](std::string& s) { s = keep_text(s, limits_.max_label_bytes, m); };
  label(e.api);
  label(e.group);
  e.model = keep_text(e.model, limits_.max_model_bytes, m);
  for (auto& o : e.new_offloads) {
    o.handle = keep_text(o.handle, limits_.max_handle_bytes, m);
    o.tool = keep_text(o.tool, limits_.max_tool_bytes, m);
    label(o.kind);
  }
  for (auto& p : e.page_ins) {
    p.handle = keep_text(p.handle, limits_.max_handle_bytes, m);
    p.tool = keep_text(p.tool, limits_.max_tool_bytes, m);
    label(p.shape);
    label(p.result);
  }
  drops_.text.cut += m.cut;
  drops_.text.repaired += m.repaired;
}

void conversation_ledger::evict_least_recent() {
  if (recent_.empty()) return;
  bytes_ -= recent_.back().bytes;
  index_.erase(recent_.back().trace_id);
  recent_.pop_back();
  ++drops_.conversations;
}

conversation_ledger::conversation& conversation_ledger::touch(const turn_event& e) {
  if (auto it = index_.find(e.trace_id); it != index_.end()) {
    recent_.splice(recent_.begin(), recent_, it->second);  // most recently seen first
    return recent_.front();
  }
  if (limits_.conversations == 0 || index_.size() >= limits_.conversations) evict_least_recent();
  recent_.push_front(conversation{e.trace_id, e.api, e.model, e.group, 0, e.unix_ms, e.unix_ms, 0, 0, 0, 0, 0, 0, {}, {},
                                  conversation_join(1, limits_.handles)});
  index_.emplace(e.trace_id, recent_.begin());
  auto& c = recent_.front();
  c.bytes = sizeof c + 2 * c.trace_id.size() + c.api.size() + c.model.size() + c.group.size() + 2 * node_bytes;
  bytes_ += c.bytes;
  return c;
}

void conversation_ledger::add(turn_event e) {
  if (!valid_trace_id(e.trace_id)) return;
  clean(e);
  auto& c = touch(e);
  turn_row t;
  t.bytes = sizeof t;
  t.n = ++c.turns;
  t.unix_ms = e.unix_ms;
  t.status = e.status;
  t.input_tokens = e.input_tokens;
  t.offloads = e.offloads;
  t.kept_inline = e.kept_inline;
  t.offloaded_tokens = saved(e.tokens_before, e.tokens_after);
  t.ledger = e.ledger;
  c.last_ms = std::max(c.last_ms, e.unix_ms);
  if (!e.model.empty()) {
    c.bytes = c.bytes - c.model.size() + e.model.size();
    bytes_ = bytes_ - c.model.size() + e.model.size();
    c.model = e.model;
  }
  c.offloads += e.offloads;
  c.kept_inline += e.kept_inline;
  c.offloaded_tokens += t.offloaded_tokens;
  c.ledger.add(e.ledger);

  // This turn's offloads join before its page-ins: a blob paged back in the
  // turn that offloaded it churned (conversation_join, as `gistproxy report`).
  const auto handles_before = c.join.handles_dropped();
  std::size_t join_bytes = 0;
  for (auto& o : e.new_offloads) {
    const auto joined_before = c.join.handles();
    c.join.offload(o.handle, o.tool, t.n);
    if (c.join.handles() > joined_before) join_bytes += o.handle.size() + o.tool.size() + 2 * node_bytes;
    if (t.offloads_kept.size() < limits_.details_per_turn) {
      t.bytes += row_bytes(o);
      t.offloads_kept.push_back(std::move(o));
    } else {
      ++t.offloads_not_kept;
    }
  }
  t.offloads_not_kept += e.new_offloads_dropped;
  for (auto& p : e.page_ins) {
    auto joined = c.join.page_in(p.handle, p.tool, t.n);
    if (p.tool.empty()) p.tool = joined.tool;
    ++c.page_ins;
    if (joined.churn) ++c.churn;
    if (!p.integrity_ok) ++c.integrity_failures;
    if (t.page_ins.size() < limits_.details_per_turn) {
      t.bytes += row_bytes(p);
      t.page_ins.push_back({std::move(p), std::move(joined.churn)});
    } else {
      ++t.page_ins_not_kept;
    }
  }
  c.page_ins += e.page_ins_dropped;
  t.page_ins_not_kept += e.page_ins_dropped;
  drops_.handles += c.join.handles_dropped() - handles_before;
  drops_.details += t.offloads_not_kept + t.page_ins_not_kept;

  c.bytes += t.bytes + join_bytes;
  bytes_ += t.bytes + join_bytes;
  c.kept.push_back(std::move(t));
  while (c.kept.size() > limits_.turns) {
    c.bytes -= c.kept.front().bytes;
    bytes_ -= c.kept.front().bytes;
    c.kept.pop_front();
    ++drops_.turns;
  }
  // The whole ledger's bound: the least recently seen go first, never the
  // conversation just added (one conversation is bounded by the limits above).
  while (bytes_ > limits_.max_bytes && recent_.size() > 1) evict_least_recent();
}

nlohmann::json conversation_ledger::summary_of(const conversation& c) const {
  // Rows are keyed by the conversation id (gen_ai.conversation.id), which is
  // not the trace id since conversations follow content; `trace_id` is the
  // old name of the same value, kept for scripts that read it.
  return {{"conversation_id", c.trace_id}, {"trace_id", c.trace_id}, {"api", c.api},           {"model", c.model},
          {"group", c.group},       {"turns", c.turns},       {"first_seen_unix_ms", c.first_ms},
          {"last_seen_unix_ms", c.last_ms}, {"offloads", c.offloads}, {"offloaded_tokens", c.offloaded_tokens},
          {"page_ins", c.page_ins}, {"churn", c.churn},       {"integrity_failures", c.integrity_failures},
          {"kept_inline", c.kept_inline},
          // The ledger: saved = without - with, over the turns whose answers carried usage.
          {"input_tokens_without", c.ledger.input_without}, {"input_tokens_with", c.ledger.input_with},
          {"tokens_saved", c.ledger.input_without - c.ledger.input_with},
          {"usd_saved", c.ledger.usd_without - c.ledger.usd_with}, {"unmeasured_turns", c.ledger.unmeasured}};
}

nlohmann::json conversation_ledger::conversations_json(std::size_t max) const {
  auto out = nlohmann::json::array();
  for (const auto& c : recent_) {
    if (out.size() >= max) break;
    out.push_back(summary_of(c));
  }
  return out;
}

std::optional<nlohmann::json> conversation_ledger::conversation_json(const std::string& trace_id) const {
  auto it = index_.find(trace_id);
  if (it == index_.end()) return std::nullopt;
  const auto& c = *it->second;
  auto j = summary_of(c);
  auto turns = nlohmann::json::array();
  for (const auto& t : c.kept) {
    auto offloads = nlohmann::json::array();
    for (const auto& o : t.offloads_kept) offloads.push_back(offload_json(o));
    auto page_ins = nlohmann::json::array();
    for (const auto& p : t.page_ins) {
      nlohmann::json pj = {{"handle", p.d.handle}, {"tool", p.d.tool}, {"shape", p.d.shape},
                           {"result", p.d.result}, {"hop", p.d.hop},   {"integrity_ok", p.d.integrity_ok},
                           {"bytes", p.d.bytes},   {"tokens", p.d.tokens}, {"churn", p.churn.has_value()}};
      if (p.churn) pj["offload_turn"] = p.churn->offload_turn;
      page_ins.push_back(std::move(pj));
    }
    turns.push_back({{"turn", t.n},
                     {"unix_ms", t.unix_ms},
                     {"status", t.status},
                     {"input_tokens", t.input_tokens},
                     {"offloads", t.offloads},
                     {"offloaded_tokens", t.offloaded_tokens},
                     {"measured", t.ledger.measured},
                     {"input_tokens_without", t.ledger.input_without},
                     {"input_tokens_with", t.ledger.input_with},
                     {"tokens_saved", t.ledger.input_saved()},
                     {"usd_saved", t.ledger.usd_saved()},
                     {"kept_inline", t.kept_inline},
                     {"new_offloads", std::move(offloads)},
                     {"new_offloads_not_shown", t.offloads_not_kept},
                     {"page_ins", std::move(page_ins)},
                     {"page_ins_not_shown", t.page_ins_not_kept}});
  }
  j["turns_not_shown"] = c.turns - c.kept.size();
  j["turns_detail"] = std::move(turns);
  return j;
}

void minute_series::observe(std::uint64_t unix_ms, const series_totals& now) {
  if (buckets_.empty()) return;
  auto delta = [](std::uint64_t cur, std::uint64_t prev) { return cur >= prev ? cur - prev : cur; };
  const std::uint64_t minute = unix_ms / 60000;
  auto& b = buckets_[minute % buckets_.size()];
  if (b.minute != minute) b = bucket{minute, {}};
  b.sum.sent += delta(now.sent, last_.sent);
  b.sum.saved += delta(now.saved, last_.saved);
  b.sum.page_ins += delta(now.page_ins, last_.page_ins);
  b.sum.churn += delta(now.churn, last_.churn);
  last_ = now;
}

nlohmann::json minute_series::to_json(std::uint64_t unix_ms) const {
  auto out = nlohmann::json::array();
  const std::uint64_t now = unix_ms / 60000;
  const std::uint64_t n = buckets_.size();
  for (std::uint64_t i = 0; i < n; ++i) {
    if (now + 1 < n - i) continue;  // before the epoch: only in tests with tiny clocks
    const std::uint64_t minute = now + 1 + i - n;
    const auto& b = buckets_[minute % n];
    const auto s = b.minute == minute ? b.sum : series_totals{};
    out.push_back({{"unix_ms", minute * 60000}, {"sent", s.sent}, {"saved", s.saved}, {"page_ins", s.page_ins}, {"churn", s.churn}});
  }
  return out;
}

nlohmann::json summary_json(const totals& t, const minute_series& series, const drops& d, std::uint64_t unix_ms,
                            std::uint64_t started_unix_ms) {
  // "Saved" is the ledger's (rewrite/cost/ledger.hpp): the client's requests
  // as sent against every request gistproxy made for them, page-ins included.
  const auto saved_tokens = std::int64_t(t.input_without) - std::int64_t(t.input_with);
  auto groups = nlohmann::json::object();
  for (const auto& [name, g] : t.groups)
    groups[name] = {{"requests", g.requests}, {"input_tokens", g.input_tokens}, {"cost_usd", g.cost_usd}};
  return {
      {"unix_ms", unix_ms},
      {"started_unix_ms", started_unix_ms},
      {"requests", t.requests},
      {"input_tokens", t.input_tokens},
      {"input_tokens_without", t.input_without},
      {"input_tokens_with", t.input_with},
      {"tokens_saved", saved_tokens},
      // Of what the requests would have sent without gistproxy.
      {"saved_share", t.input_without ? double(saved_tokens) / double(t.input_without) : 0.0},
      {"usd_without", t.usd_without},
      {"usd_with", t.usd_with},
      {"net_saved_usd", t.usd_without - t.usd_with},
      {"unmeasured_requests", t.unmeasured_requests},
      {"unpriced_requests", t.unpriced_requests},
      // The offload estimate, by our tokenizer: what offloads took out of the
      // requests, and its dollar parts before and after overhead.
      {"offloaded_tokens", t.tokens_saved()},
      {"saved_usd", t.saved_usd},
      {"offload_overhead_usd", t.overhead_usd},
      {"cache_read_share", t.cache_reported_tokens ? double(t.cache_read_tokens) / double(t.cache_reported_tokens) : 0.0},
      {"offloads", t.offloads},
      {"page_ins", t.page_ins},
      {"churn", t.churn},
      {"kept_inline_churn", t.kept_inline_churn},
      {"integrity_failures", t.integrity_failures},
      {"rewrite_failures", t.rewrite_failures},
      {"groups", groups},
      {"per_minute", series.to_json(unix_ms)},
      {"dropped", {{"events", d.events}, {"conversations", d.conversations}, {"turns", d.turns},
                   {"details", d.details}, {"handles", d.handles},
                   {"text_cut", d.text.cut}, {"text_repaired", d.text.repaired}}},
  };
}

}  // namespace gistproxy::telemetry::live
