#include "telemetry/tenant_ledger.hpp"

#include <catch2/catch.hpp>

using namespace gistproxy;
using namespace gistproxy::telemetry::live;

namespace {

rewrite::ledger_entry entry(std::int64_t without, std::int64_t with, double usd_without, double usd_with) {
  rewrite::ledger_entry e;
  e.measured = e.priced = true;
  e.input_without = without;
  e.input_with = with;
  e.usd_without = usd_without;
  e.usd_with = usd_with;
  return e;
}

const nlohmann::json* row_of(const nlohmann::json& j, const std::string& tenant) {
  for (const auto& r : j["tenants"])
    if (r["tenant"] == tenant) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("tenant ledger sums each tenant's entries apart") {
  tenant_ledger t;
  t.add("aaaa", entry(1000, 400, 0.010, 0.004));
  t.add("aaaa", entry(1000, 1100, 0.010, 0.011));
  t.add("bbbb", entry(500, 500, 0.005, 0.005));
  rewrite::ledger_entry unmeasured;
  t.add("bbbb", unmeasured);
  const auto j = t.to_json(10);
  REQUIRE(j["tenants"].size() == 2);
  const auto* a = row_of(j, "aaaa");
  REQUIRE(a);
  CHECK((*a)["requests"] == 2);
  CHECK((*a)["input_tokens_without"] == 2000);
  CHECK((*a)["input_tokens_with"] == 1500);
  CHECK((*a)["tokens_saved"] == 500);
  CHECK((*a)["net_saved_usd"].get<double>() == Approx(0.005));
  const auto* b = row_of(j, "bbbb");
  REQUIRE(b);
  CHECK((*b)["requests"] == 2);
  CHECK((*b)["unmeasured_requests"] == 1);
  CHECK((*b)["tokens_saved"] == 0);
  // The row that saved most comes first.
  CHECK(j["tenants"][0]["tenant"] == "aaaa");
  CHECK(j["other"]["requests"] == 0);
}

TEST_CASE("tenant ledger folds the least saving tenant into other and still adds up") {
  tenant_ledger t(3);
  for (int i = 0; i < 10; ++i) t.add("t" + std::to_string(i), entry(100 * (i + 1), 50, 0.001 * (i + 1), 0.0005));
  const auto j = t.to_json(3);
  REQUIRE(j["tenants"].size() == 3);
  CHECK(j["tenants_kept"] == 3);
  CHECK(j["tenants_folded"] == 7);
  // The three that saved most keep their rows, in order.
  CHECK(j["tenants"][0]["tenant"] == "t9");
  CHECK(j["tenants"][1]["tenant"] == "t8");
  CHECK(j["tenants"][2]["tenant"] == "t7");
  std::int64_t without = j["other"]["input_tokens_without"].get<std::int64_t>();
  std::uint64_t requests = j["other"]["requests"].get<std::uint64_t>();
  for (const auto& r : j["tenants"]) {
    without += r["input_tokens_without"].get<std::int64_t>();
    requests += r["requests"].get<std::uint64_t>();
  }
  CHECK(requests == 10);
  CHECK(without == 100 * 55);
}

TEST_CASE("tenant ledger rows beyond the shown maximum count in other") {
  tenant_ledger t;
  t.add("x", entry(300, 100, 0.003, 0.001));
  t.add("y", entry(200, 100, 0.002, 0.001));
  t.add("z", entry(100, 100, 0.001, 0.001));
  const auto j = t.to_json(1);
  REQUIRE(j["tenants"].size() == 1);
  CHECK(j["tenants"][0]["tenant"] == "x");
  CHECK(j["other"]["requests"] == 2);
  CHECK(j["other"]["tokens_saved"] == 100);
  CHECK(j["tenants_folded"] == 0);
}
