// `gistproxy report` on the span log of a live run: it must find the churn
// and the integrity failure the workload planted, by handle and turn.
#include <catch2/catch.hpp>

#include "tests/integration/operators_workload.hpp"
#include "tests/support/child_process.hpp"

using namespace gistproxy::testing;

TEST_CASE("gistproxy report finds the planted churn and integrity failure in a live span log") {
  operators_workload w;
  REQUIRE(w.run().empty());
  REQUIRE(w.proxy.stop() == 0);  // flushes the span log

  auto json = run_command({gistproxy_binary(), "report", "--json", w.spans.string()});
  INFO(json.output);
  CHECK(json.exit_code == 1);  // an integrity failure was found
  auto r = nlohmann::json::parse(json.output);
  CHECK(r["skipped"].empty());

  std::vector<nlohmann::json> churn, failures;
  for (auto& c : r["conversations"]) {
    for (auto& p : c["churn_pairs"]) churn.push_back(p);
    for (auto& f : c["integrity_failure_details"]) failures.push_back(f);
  }
  // The churned blob: paged back in the turn that offloaded it and in the next one.
  REQUIRE(churn.size() >= 2);
  std::set<std::uint64_t> gaps;
  for (auto& p : churn)
    if (p["handle"] == w.churned_handle) {
      CHECK(p["tool"] == "read_config");
      gaps.insert(p["turns_between"].get<std::uint64_t>());
    }
  CHECK(gaps == std::set<std::uint64_t>{0, 1});
  REQUIRE(failures.size() == 1);
  CHECK(failures[0]["handle"] == w.corrupted_handle);
  CHECK(failures[0]["tool"] == "read_config");
  CHECK(failures[0]["turn"] == 1);
  CHECK(r["total"]["offloads"].get<int>() >= 6);
  CHECK(r["total"]["tokens_saved"].get<std::uint64_t>() > 100000);
  CHECK(r["by_tool"].contains("run_tests"));

  auto text = run_command({gistproxy_binary(), "report", w.spans.string()});
  CHECK(text.output.find("INTEGRITY FAILURE: " + w.corrupted_handle) != std::string::npos);
  CHECK(text.output.find("churn: " + w.churned_handle.substr(0, 16) + " read_config") != std::string::npos);

  auto missing = run_command({gistproxy_binary(), "report", "/nonexistent/spans.jsonl"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("cannot open /nonexistent/spans.jsonl") != std::string::npos);
}
