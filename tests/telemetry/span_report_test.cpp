#include <catch2/catch.hpp>

#include "telemetry/span_report.hpp"

using namespace gistproxy::telemetry;

namespace {

std::string span(const std::string& trace, const std::string& id, const std::string& parent, const std::string& name,
                 std::uint64_t start, nlohmann::json attrs = nlohmann::json::object()) {
  return nlohmann::json{{"traceId", trace}, {"spanId", id}, {"parentSpanId", parent}, {"name", name},
                        {"startTimeUnixNano", start}, {"attributes", attrs}}
      .dump();
}

std::string compaction(const std::string& trace, const std::string& parent, const std::string& handle,
                       const std::string& tool, std::uint64_t before, std::uint64_t after) {
  return span(trace, "c-" + parent + handle, parent, "compaction", 0,
              {{"gistproxy.handle", handle}, {"gen_ai.tool.name", tool}, {"gistproxy.tokens_before", before},
               {"gistproxy.tokens_after", after}});
}

std::string page_in(const std::string& trace, const std::string& id, const std::string& parent, const std::string& handle,
                    bool integrity_ok = true) {
  return span(trace, id, parent, "page_in", 0,
              {{"gistproxy.handle", handle}, {"gistproxy.integrity_ok", integrity_ok},
               {"gistproxy.result", integrity_ok ? "ok" : "integrity_error"}});
}

// Conversation T: turn 1 offloads h1 (cat) and pages it back; turn 2 pages h1
// again; turn 3 offloads h2 (grep); turn 4 pages h2 in after a corruption and
// h1 (three turns after its offload). Conversation U: one plain request.
span_report_builder planted(report_options options = {}) {
  span_report_builder b(options);
  // Lines arrive out of order across turns, as with several span logs.
  std::vector<std::string> lines = {
      span("T", "r3", "", "gistproxy.request", 300),
      span("T", "r1", "", "gistproxy.request", 100),
      compaction("T", "r1", "h1", "cat", 10000, 100),
      page_in("T", "p1", "r1", "h1"),
      span("T", "r2", "", "gistproxy.request", 200),
      compaction("T", "r2", "h1", "cat", 10000, 100),
      page_in("T", "p2", "r2", "h1"),
      compaction("T", "r3", "h2", "grep", 5000, 50),
      span("T", "r4", "", "gistproxy.request", 400),
      page_in("T", "p4", "r4", "h2", false),
      page_in("T", "p5", "r4", "h1"),
      span("T", "u-child", "r1", "chat gpt-4o", 150),
      span("U", "q1", "", "gistproxy.request", 50),
  };
  for (std::size_t i = 0; i < lines.size(); ++i) b.add_line(lines[i], "log:" + std::to_string(i + 1));
  return b;
}

}  // namespace

TEST_CASE("report orders requests into turns and finds churn pairs and integrity failures") {
  auto r = planted().build();
  REQUIRE(r.conversations.size() == 2);
  CHECK(r.conversations[0].trace_id == "U");  // ordered by first request
  const auto& t = r.conversations[1];
  CHECK(t.counts.requests == 4);
  CHECK(t.counts.offloads == 3);
  CHECK(t.counts.tokens_saved() == 9900 + 9900 + 4950);
  CHECK(t.counts.page_ins == 4);
  CHECK(t.counts.page_in_errors == 1);
  // h1 in turns 1 and 2 (not turn 4: 3 turns later); h2 offloaded in turn 3, paged in turn 4.
  REQUIRE(t.churn.size() == 3);
  CHECK(t.churn[0].handle == "h1");
  CHECK(t.churn[0].tool == "cat");
  CHECK(t.churn[0].turns_between() == 0);
  CHECK(t.churn[1].offload_turn == 1);
  CHECK(t.churn[1].page_in_turn == 2);
  CHECK(t.churn[2].handle == "h2");
  CHECK(t.churn[2].turns_between() == 1);
  REQUIRE(t.failures.size() == 1);
  CHECK(t.failures[0].handle == "h2");
  CHECK(t.failures[0].tool == "grep");  // from its compaction span
  CHECK(t.failures[0].turn == 4);
  CHECK(r.by_tool.at("cat").churn == 2);
  CHECK(r.by_tool.at("grep").churn == 1);
  CHECK(r.by_tool.at("grep").integrity_failures == 1);
  CHECK(r.total.integrity_failures == 1);
}

TEST_CASE("the churn window is an option") {
  auto r = planted({.churn_turns = 3}).build();
  CHECK(r.total.churn == 4);
  r = planted({.churn_turns = 0}).build();
  CHECK(r.total.churn == 1);
}

TEST_CASE("report text and JSON carry the same findings") {
  auto r = planted().build();
  auto text = format_report_text(r);
  CHECK(text.find("churn: h1 cat: offloaded turn 1, paged in turn 2 (1 turns later)") != std::string::npos);
  CHECK(text.find("INTEGRITY FAILURE: h2 grep, turn 4, span p4") != std::string::npos);
  CHECK(text.find("tokens saved 24,750") != std::string::npos);
  auto j = report_to_json(r);
  CHECK(j["total"]["churn"] == 3);
  CHECK(j["total"]["integrity_failures"] == 1);
  CHECK(j["conversations"][1]["churn_pairs"][1]["turns_between"] == 1);
  CHECK(j["conversations"][1]["integrity_failure_details"][0]["handle"] == "h2");
}

TEST_CASE("unreadable lines are named and skipped, blank lines ignored") {
  span_report_builder b;
  b.add_line("", "a:1");
  b.add_line("{not json", "a:2");
  b.add_line(R"({"hello":1})", "a:3");
  b.add_line(span("T", "r1", "", "gistproxy.request", 1), "a:4");
  auto r = b.build();
  CHECK(r.conversations.size() == 1);
  REQUIRE(r.problems.size() == 2);
  CHECK(r.problems[0] == "a:2: not a JSON object");
  CHECK(r.problems[1].rfind("a:3: ", 0) == 0);
}

TEST_CASE("the ledger per tenant adds up to the total and names no credential") {
  span_report_builder b;
  auto request = [](const std::string& trace, const std::string& id, std::uint64_t start, nlohmann::json attrs) {
    return span(trace, id, "", "gistproxy.request", start, std::move(attrs));
  };
  const std::vector<std::string> lines = {
      // Two tenants, one conversation each, and one of them in a second one.
      request("A", "a1", 1, {{"gistproxy.tenant", "00000000000000aa"}, {"gistproxy.input_tokens_without", 1000},
                             {"gistproxy.input_tokens_with", 400}, {"gistproxy.saved_usd", 0.5}}),
      request("A", "a2", 2, {{"gistproxy.tenant", "00000000000000aa"}, {"gistproxy.input_tokens_without", 2000},
                             {"gistproxy.input_tokens_with", 900}, {"gistproxy.saved_usd", 1.0}}),
      request("B", "b1", 3, {{"gistproxy.tenant", "00000000000000bb"}, {"gistproxy.input_tokens_without", 500},
                             {"gistproxy.input_tokens_with", 700}, {"gistproxy.saved_usd", -0.25}}),
      request("C", "c1", 4, {{"gistproxy.tenant", "00000000000000bb"}}),  // no usage: unmeasured
      request("D", "d1", 5, {{"gistproxy.input_tokens_without", 10}, {"gistproxy.input_tokens_with", 10}}),  // an old log
      request("E", "e1", 6, {{"gistproxy.tenant", std::string(65, 'x')}}),  // not a name gistproxy writes
  };
  for (std::size_t i = 0; i < lines.size(); ++i) b.add_line(lines[i], "log:" + std::to_string(i + 1));
  const auto r = b.build();
  REQUIRE(r.by_tenant.size() == 4);
  const auto& a = r.by_tenant.at("00000000000000aa");
  CHECK(a.requests == 2);
  CHECK(a.input_without == 3000);
  CHECK(a.input_with == 1300);
  CHECK(a.usd_saved == Approx(1.5));
  const auto& bb = r.by_tenant.at("00000000000000bb");
  CHECK(bb.requests == 2);
  CHECK(bb.unmeasured == 1);
  CHECK(bb.usd_saved == Approx(-0.25));  // costing more shows as it is
  CHECK(r.by_tenant.at("(unknown)").requests == 1);
  CHECK(r.by_tenant.at("(invalid)").requests == 1);
  report_counts sum;
  for (const auto& [tenant, c] : r.by_tenant) sum.add(c);
  CHECK(sum.requests == r.total.requests);
  CHECK(sum.input_without == r.total.input_without);
  CHECK(sum.input_with == r.total.input_with);
  CHECK(sum.usd_saved == Approx(r.total.usd_saved));
  CHECK(sum.unmeasured == r.total.unmeasured);
  const auto j = report_to_json(r);
  CHECK(j["by_tenant"]["00000000000000aa"]["input_tokens_with"] == 1300);
  CHECK(j["by_tenant"]["00000000000000bb"]["unmeasured_requests"] == 1);
  const auto text = format_report_text(r);
  CHECK(text.find("by tenant:\n  (invalid): 1 requests\n") != std::string::npos);
  CHECK(text.find("  00000000000000aa: 2 requests; billed input tokens 3,000 without, 1,300 with (56.7% saved), $1.5000 saved\n") !=
        std::string::npos);
  CHECK(text.find(std::string(65, 'x')) == std::string::npos);
}
