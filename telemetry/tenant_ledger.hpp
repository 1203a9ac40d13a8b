// The ledger of "saved" per tenant (docs/telemetry.md#saved), for the admin
// listener's /api/tenants: what each tenant's requests would have cost
// without gistproxy beside what they cost with it. A tenant is the name the
// blob store already gives it (16 hex digits of its credential's SHA-256, or
// "anonymous"), never the credential.
//
// Bounded: any client can send a new key on every request, so at most
// `capacity` tenants have a row. When a new tenant finds the table full, the
// row that saved the least is folded into "other", so the rows and "other"
// always add up to the whole ledger; a folded tenant that comes back starts
// a new row. Pure logic: the owner (live_feed) feeds and locks it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "rewrite/cost/ledger.hpp"

namespace gistproxy::telemetry::live {

class tenant_ledger {
 public:
  explicit tenant_ledger(std::size_t capacity = 256) : capacity_(capacity ? capacity : 1) {}
  void add(const std::string& tenant, const rewrite::ledger_entry& e);
  // The `max` rows that saved the most dollars (then tokens), "other" and
  // how many tenants were folded into it.
  nlohmann::json to_json(std::size_t max) const;
  std::size_t size() const { return rows_.size(); }

 private:
  void fold_least_saving();

  std::size_t capacity_;
  std::unordered_map<std::string, rewrite::ledger_total> rows_;
  rewrite::ledger_total other_;
  std::uint64_t folded_ = 0;
};

// A ledger total as every meter names its fields.
nlohmann::json ledger_json(const rewrite::ledger_total& t);

}  // namespace gistproxy::telemetry::live
