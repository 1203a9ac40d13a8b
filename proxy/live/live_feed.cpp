#include "proxy/live/live_feed.hpp"

#include "rewrite/json/checked.hpp"

namespace gistproxy::proxy {
namespace {

// The value of label `index` of a series (empty when the family has no such label).
std::string_view label(const std::vector<std::string>& values, std::size_t index) {
  return index < values.size() ? std::string_view(values[index]) : std::string_view();
}

template <class Family>
std::uint64_t sum(const Family& f) {
  std::uint64_t n = 0;
  f.for_each([&](const auto&, const auto& c) { n += c.value(); });
  return n;
}

template <class Family>
double amount(const Family& f) {
  double n = 0;
  f.for_each([&](const auto&, const auto& c) { n += c.value(); });
  return n;
}

}  // namespace

live_feed::live_feed(telemetry::metric_catalogue& metrics, std::function<std::uint64_t()> unix_ms,
                     telemetry::live::limits limits, std::size_t queue_capacity)
    : metrics_(metrics), unix_ms_(std::move(unix_ms)), started_ms_(unix_ms_()), limits_(limits),
      queue_(queue_capacity), ledger_(limits) {}

telemetry::live::totals live_feed::read_totals() const {
  telemetry::live::totals t;
  auto& m = metrics_;
  // Label orders as declared in metric_catalogue.cpp.
  m.requests.for_each([&](const auto& l, const auto& c) {  // api, status, group, protocol
    t.requests += c.value();
    t.groups[std::string(label(l, 2))].requests += c.value();
  });
  m.input_tokens.for_each([&](const auto& l, const auto& c) {  // api, group
    t.input_tokens += c.value();
    t.groups[std::string(label(l, 1))].input_tokens += c.value();
  });
  m.cost_usd.for_each([&](const auto& l, const auto& c) {  // api, kind, group
    t.groups[std::string(label(l, 2))].cost_usd += c.value();
  });
  m.prompt_cache_tokens.for_each([&](const auto& l, const auto& c) {  // api, kind, group
    t.cache_reported_tokens += c.value();
    if (label(l, 1) == "read") t.cache_read_tokens += c.value();
  });
  m.rewrite_failures.for_each([&](const auto& l, const auto& c) {  // api, reason
    if (c.value()) t.rewrite_failures[std::string(label(l, 1))] += c.value();
  });
  t.tokens_before = sum(m.offload_tokens_before);
  t.tokens_after = sum(m.offload_tokens_after);
  t.saved_usd = amount(m.saved_usd);
  t.overhead_usd = amount(m.offload_overhead_usd);
  t.unpriced_requests = sum(m.unpriced_requests);
  t.unmeasured_requests = sum(m.unmeasured_requests);
  m.ledger_input_tokens.for_each([&](const auto& l, const auto& c) {  // api, side
    (label(l, 1) == "with" ? t.input_with : t.input_without) += c.value();
  });
  m.ledger_usd.for_each([&](const auto& l, const auto& c) {  // api, side
    (label(l, 1) == "with" ? t.usd_with : t.usd_without) += c.value();
  });
  t.offloads = sum(m.offloads);
  t.page_ins = sum(m.page_ins);
  t.churn = sum(m.paging_churn);
  m.outputs_kept_inline.for_each([&](const auto& l, const auto& c) {  // api, cause
    if (label(l, 1) == "churn") t.kept_inline_churn += c.value();
  });
  t.integrity_failures = sum(m.integrity_failures);
  // Groups only appear once a request of theirs finished.
  for (auto it = t.groups.begin(); it != t.groups.end();) it = it->second.requests ? std::next(it) : t.groups.erase(it);
  return t;
}

void live_feed::tick() {
  auto events = queue_.take();  // the producers' lock is released before the ledger's work
  const auto t = read_totals();
  std::lock_guard lock(mutex_);
  for (auto& e : events) {
    if (e.in_ledger) tenants_.add(e.tenant.empty() ? "anonymous" : e.tenant, e.ledger);
    ledger_.add(std::move(e));
  }
  series_.observe(unix_ms_(), {t.input_tokens, t.tokens_saved(), t.page_ins, t.churn});
}

std::string live_feed::summary_json() {
  const auto t = read_totals();
  std::lock_guard lock(mutex_);
  auto d = ledger_.dropped();
  d.events = queue_.dropped();
  auto j = telemetry::live::summary_json(t, series_, d, unix_ms_(), started_ms_);
  j["conversations_kept"] = ledger_.size();
  j["ledger_bytes"] = ledger_.bytes();
  return rewrite::checked::dump(j);
}

std::string live_feed::conversations_json() {
  std::lock_guard lock(mutex_);
  return rewrite::checked::dump(nlohmann::json{{"conversations", ledger_.conversations_json(limits_.conversations)}});
}

std::string live_feed::tenants_json() {
  std::lock_guard lock(mutex_);
  auto j = tenants_.to_json(tenants_.size());  // every row kept (at most its capacity)
  j["dropped_events"] = queue_.dropped();  // not in any row (the queue was full)
  return rewrite::checked::dump(j);
}

std::optional<std::string> live_feed::conversation_json(const std::string& trace_id) {
  std::lock_guard lock(mutex_);
  auto j = ledger_.conversation_json(trace_id);
  if (!j) return std::nullopt;
  return rewrite::checked::dump(*j);
}

}  // namespace gistproxy::proxy
