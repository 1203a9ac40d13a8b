// `gistproxy report`: the offline twin of the dashboard. Joins the compaction
// and page_in spans of span logs on trace id (one trace = one conversation),
// orders each conversation's request spans into turns, and finds churn pairs
// (a blob paged back within `churn_turns` turns of its first offload) and
// integrity failures through conversation_join, the live view's join too.
// Pure logic: lines in, a report out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/conversation_join.hpp"

namespace gistproxy::telemetry {

struct integrity_failure {
  std::string handle;
  std::string tool;
  std::uint64_t turn = 0;  // 0 when the request span is not in the logs
  std::string span_id;
};

struct report_counts {
  std::uint64_t requests = 0;
  std::uint64_t offloads = 0;
  std::uint64_t tokens_before = 0;  // estimated tokens of the offloaded outputs
  std::uint64_t tokens_after = 0;   // of the references that replaced them
  std::uint64_t page_ins = 0;
  std::uint64_t page_in_errors = 0;  // page-ins that did not return bytes (any reason)
  std::uint64_t churn = 0;
  std::uint64_t integrity_failures = 0;
  // The ledger, from the request spans (docs/telemetry.md#saved): the
  // client's requests as sent against every request gistproxy made.
  std::uint64_t input_without = 0, input_with = 0;
  double usd_saved = 0;
  std::uint64_t unmeasured = 0;  // request spans without a ledger entry
  std::uint64_t tokens_saved() const { return tokens_before > tokens_after ? tokens_before - tokens_after : 0; }
  void add(const report_counts& o);
};

struct conversation_report {
  std::string trace_id;
  std::uint64_t first_start_ns = 0;
  report_counts counts;
  std::vector<churn_pair> churn;
  std::vector<integrity_failure> failures;
};

struct span_report {
  std::vector<conversation_report> conversations;  // by first request time
  std::map<std::string, report_counts> by_tool;    // offloads, tokens, page-ins, churn per tool
  // Requests and the ledger per tenant (gistproxy.tenant: the store's name
  // for a credential); "(unknown)" for spans from before it was recorded.
  std::map<std::string, report_counts> by_tenant;
  report_counts total;
  std::uint64_t spans = 0;
  std::vector<std::string> problems;  // unreadable lines: "FILE:LINE: why"
};

struct report_options {
  std::uint64_t churn_turns = 1;  // same rule as gistproxy_paging_churn_total
};

class span_report_builder {
 public:
  explicit span_report_builder(report_options options = {}) : options_(options) {}
  // One span-log line; `where` ("file:line") names it in problems.
  void add_line(std::string_view line, const std::string& where);
  span_report build() const;

 private:
  struct span_row {
    std::string trace, id, parent, name;
    std::uint64_t start_ns = 0;
    nlohmann::json attributes;
  };
  report_options options_;
  std::vector<span_row> rows_;
  std::vector<std::string> problems_;
};

std::string format_report_text(const span_report& r);
nlohmann::json report_to_json(const span_report& r);

}  // namespace gistproxy::telemetry
