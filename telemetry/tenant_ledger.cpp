#include "telemetry/tenant_ledger.hpp"

#include <algorithm>
#include <vector>

namespace gistproxy::telemetry::live {
namespace {

// The order rows are shown and folded in: dollars saved, then tokens saved.
bool saves_less(const rewrite::ledger_total& a, const rewrite::ledger_total& b) {
  const double usd_a = a.usd_without - a.usd_with, usd_b = b.usd_without - b.usd_with;
  if (usd_a != usd_b) return usd_a < usd_b;
  return a.input_without - a.input_with < b.input_without - b.input_with;
}

}  // namespace

nlohmann::json ledger_json(const rewrite::ledger_total& t) {
  return {{"requests", t.requests},
          {"unmeasured_requests", t.unmeasured},
          {"unpriced_requests", t.unpriced},
          {"input_tokens_without", t.input_without},
          {"input_tokens_with", t.input_with},
          {"tokens_saved", t.input_without - t.input_with},
          {"saved_share", t.saved_share()},
          {"usd_without", t.usd_without},
          {"usd_with", t.usd_with},
          {"net_saved_usd", t.usd_without - t.usd_with}};
}

void tenant_ledger::add(const std::string& tenant, const rewrite::ledger_entry& e) {
  auto it = rows_.find(tenant);
  if (it == rows_.end()) {
    if (rows_.size() >= capacity_) fold_least_saving();
    it = rows_.emplace(tenant, rewrite::ledger_total{}).first;
  }
  it->second.add(e);
}

// Linear in the capacity, and only when a new tenant finds the table full.
void tenant_ledger::fold_least_saving() {
  auto least = std::min_element(rows_.begin(), rows_.end(),
                                [](const auto& a, const auto& b) { return saves_less(a.second, b.second); });
  if (least == rows_.end()) return;
  other_.add(least->second);
  rows_.erase(least);
  ++folded_;
}

nlohmann::json tenant_ledger::to_json(std::size_t max) const {
  std::vector<const std::pair<const std::string, rewrite::ledger_total>*> order;
  order.reserve(rows_.size());
  for (const auto& r : rows_) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (saves_less(b->second, a->second)) return true;
    if (saves_less(a->second, b->second)) return false;
    return a->first < b->first;  // a stable order for equal savings
  });
  auto rows = nlohmann::json::array();
  rewrite::ledger_total not_shown = other_;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i >= max) {
      not_shown.add(order[i]->second);
      continue;
    }
    auto row = ledger_json(order[i]->second);
    row["tenant"] = order[i]->first;
    rows.push_back(std::move(row));
  }
  return {{"tenants", std::move(rows)},
          {"other", ledger_json(not_shown)},
          {"tenants_kept", rows_.size()},
          {"tenants_folded", folded_}};
}

}  // namespace gistproxy::telemetry::live
