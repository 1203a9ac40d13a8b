// One "saved", as the provider bills it: the mock bills every request by its
// size with a prefix cache (size_billing.hpp), and each meter (/metrics'
// ledger counters, /api/summary, the live view's conversation) must show the
// ledger those bills make: "with" is every upstream request gistproxy sent,
// page-in hops included, exactly as billed; "without" is the client's
// requests as sent. A summary that counted gistproxy's own page-in hops as
// savings (the old meter) fails the re-read case here.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/integration/harness.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/size_billing.hpp"
#include "tests/support/tool_conversation.hpp"

using namespace gistproxy::testing;

namespace {

// gpt-4o, as docs/prices.json lists it: per million tokens.
constexpr double input_usd = 2.5e-6, cached_usd = 1.25e-6, output_usd = 10e-6;
constexpr int output_tokens = 10;  // scripted_render's completion_tokens, every hop

struct billed {
  std::int64_t input = 0, first_hops_input = 0;
  double usd = 0;
  std::size_t hops = 0, page_in_hops = 0;
};

// The bill of every body the mock received, as it billed them.
billed bill_of(const std::vector<std::string>& bodies) {
  billed b;
  std::string previous;
  for (const auto& body : bodies) {
    const auto input = billed_input_tokens(body), cached = billed_cached_tokens(body, previous);
    b.input += input;
    // A page-in hop carries the model's read_blob call (scripted ids rb_N);
    // the client's own requests never do: gistproxy hides those calls.
    const bool page_in = body.find("\"rb_0\"") != std::string::npos;
    if (!page_in) b.first_hops_input += input;
    b.page_in_hops += page_in;
    b.usd += double(input - cached) * input_usd + double(cached) * cached_usd + output_tokens * output_usd;
    ++b.hops;
    previous = body;
  }
  return b;
}

double series_sum(const std::string& metrics, const std::string& name, const std::string& label) {
  double sum = 0;
  std::istringstream in(metrics);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(name + "{", 0) == 0 && l.find(label) != std::string::npos) sum += std::stod(l.substr(l.rfind(' ') + 1));
  return sum;
}

struct run_result {
  billed bill;
  std::string metrics;
  nlohmann::json summary, conversation, report;  // report: `gistproxy report --json`'s total
  nlohmann::json tenants;                        // /api/tenants
};

// `turns` turns of one conversation, each adding an output of `bytes` (over
// the offload threshold unless said), the model scripted by `ask`; the
// meters read once the live view has every request.
run_result run(const std::string& ask, int turns = 4, std::size_t bytes = 12000) {
  mock_upstream upstream;
  const auto spans = temp_path("ledger-spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", spans.string()});
  std::vector<std::string> outputs;
  for (int turn = 1; turn <= turns; ++turn) {
    outputs.push_back(log_output("out" + std::to_string(turn), bytes));
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body_of("chat", outputs, ask)).status == 200);
  }
  run_result r;
  r.bill = bill_of(upstream.llm_bodies());
  // finish() counts a request's metrics and then hands its event to the live
  // view, which takes events at the admin thread's tick: once the
  // conversation shows every turn, every counter the meters read is final.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  nlohmann::json list;
  for (;;) {
    list = nlohmann::json::parse(http_request(proxy.admin_port(), "GET", "/api/conversations").body);
    const auto& rows = list["conversations"];
    if ((rows.size() == 1 && rows[0]["turns"] == turns) || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(list["conversations"].size() == 1);
  REQUIRE(list["conversations"][0]["turns"] == turns);
  r.conversation = list["conversations"][0];
  r.summary = nlohmann::json::parse(http_request(proxy.admin_port(), "GET", "/api/summary").body);
  r.tenants = nlohmann::json::parse(http_request(proxy.admin_port(), "GET", "/api/tenants").body);
  r.metrics = http_request(proxy.admin_port(), "GET", "/metrics").body;
  REQUIRE(proxy.stop() == 0);  // flushes the span log
  const auto report = run_command({gistproxy_binary(), "report", "--json", spans.string()});
  INFO(report.output);
  r.report = nlohmann::json::parse(report.output)["total"];
  return r;
}

// Every meter shows the same ledger, and its "with" side is the mock's bill.
void check_meters_agree(const run_result& r) {
  const auto& s = r.summary;
  const double without = series_sum(r.metrics, "gistproxy_ledger_input_tokens_total", R"(side="without")");
  const double with = series_sum(r.metrics, "gistproxy_ledger_input_tokens_total", R"(side="with")");
  const double usd_without = series_sum(r.metrics, "gistproxy_ledger_usd_total", R"(side="without")");
  const double usd_with = series_sum(r.metrics, "gistproxy_ledger_usd_total", R"(side="with")");
  CHECK(with == double(r.bill.input));  // every hop, page-ins included, as billed
  CHECK(usd_with == Approx(r.bill.usd).epsilon(1e-9));
  CHECK(s["input_tokens_without"].get<double>() == without);
  CHECK(s["input_tokens_with"].get<double>() == with);
  CHECK(s["tokens_saved"].get<double>() == without - with);
  CHECK(s["net_saved_usd"].get<double>() == Approx(usd_without - usd_with).margin(1e-12));
  CHECK(s["unmeasured_requests"] == 0);
  CHECK(r.conversation["tokens_saved"].get<double>() == without - with);
  CHECK(r.conversation["usd_saved"].get<double>() == Approx(usd_without - usd_with).margin(1e-12));
  CHECK(r.report["input_tokens_without"].get<double>() == without);  // gistproxy report, from the span log
  CHECK(r.report["input_tokens_with"].get<double>() == with);
  CHECK(r.report["usd_saved"].get<double>() == Approx(usd_without - usd_with).margin(1e-9));
  REQUIRE(r.tenants["tenants"].size() == 1);  // one key (none: the anonymous tenant)
  CHECK(r.tenants["tenants"][0]["tokens_saved"].get<double>() == without - with);
  CHECK(r.tenants["tenants"][0]["net_saved_usd"].get<double>() == Approx(usd_without - usd_with).margin(1e-12));
  CHECK(r.tenants["other"]["requests"] == 0);
}

}  // namespace

// "Without" starts from what the provider billed for the client's own
// requests (the first hops) and adds back what offloading took out.
void check_without_adds_back(const run_result& r) {
  CHECK(r.summary["input_tokens_without"].get<double>() > double(r.bill.first_hops_input));
}

TEST_CASE("ledger: a model that never reads an output back saves what offloading took out") {
  auto r = run("bill by size and answer");
  REQUIRE(r.bill.page_in_hops == 0);
  check_meters_agree(r);
  check_without_adds_back(r);
  CHECK(r.summary["tokens_saved"].get<double>() > 0);
  CHECK(r.summary["net_saved_usd"].get<double>() > 0);
}

TEST_CASE("ledger: a model that reads each output once pays for its page-in hops out of the savings") {
  auto r = run("bill by size and read each new output once");
  REQUIRE(r.bill.page_in_hops == 4);
  check_meters_agree(r);
  check_without_adds_back(r);
  // The page-in hops are in "with", never in "without".
  CHECK(r.summary["input_tokens_with"].get<double>() > double(r.bill.first_hops_input));
}

TEST_CASE("ledger: a model that re-reads everything shows the bill it made, even when it is no saving") {
  auto r = run("bill by size and reread everything");
  // Turn 1 pages; turn 2 tells a re-reader and asks again with the outputs
  // inline (a hop without a read_blob result); later turns send them inline.
  REQUIRE(r.bill.hops == 6);
  check_meters_agree(r);
  // Whatever the sign: without - with, never without + page-ins.
  CHECK(r.summary["tokens_saved"].get<double>() ==
        r.summary["input_tokens_without"].get<double>() - double(r.bill.input));
}

TEST_CASE("ledger: a prompt-cache miss is billed uncached on both sides") {
  auto r = run("bill by size, cache miss, and read each new output once");
  check_meters_agree(r);
  auto hit = run("bill by size, cache warm, and read each new output once");  // the same length
  // Same tokens, dearer without the cache: "with" is what the bill says.
  CHECK(r.summary["input_tokens_with"] == hit.summary["input_tokens_with"]);
  CHECK(series_sum(r.metrics, "gistproxy_ledger_usd_total", R"(side="with")") >
        series_sum(hit.metrics, "gistproxy_ledger_usd_total", R"(side="with")"));
}

TEST_CASE("ledger: a request gistproxy leaves as sent is in both sides alike") {
  auto r = run("bill by size and answer", 3, 2000);  // outputs under the threshold: relayed as sent
  check_meters_agree(r);
  CHECK(r.summary["input_tokens_with"].get<double>() == double(r.bill.input));
  CHECK(r.summary["input_tokens_without"] == r.summary["input_tokens_with"]);
  CHECK(r.summary["tokens_saved"] == 0);
}

TEST_CASE("ledger: an answer without usage is counted apart and in no figure") {
  auto r = run("no usage and read each new output once", 3);
  CHECK(r.summary["unmeasured_requests"] == 3);
  CHECK(r.summary["input_tokens_without"] == 0);
  CHECK(r.summary["input_tokens_with"] == 0);
  CHECK(r.summary["net_saved_usd"].get<double>() == 0);
  CHECK(r.conversation["unmeasured_turns"] == 3);
  CHECK(series_sum(r.metrics, "gistproxy_unmeasured_requests_total", R"(api="chat")") == 3);
}

TEST_CASE("ledger: a streamed answer's hops are each counted once, page-ins included") {
  // Streams report usage in their last chunk: each hop's usage is how much
  // the reader's sum grew (scripted_render: 100 input tokens a hop).
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  std::vector<std::string> outputs;
  for (int turn = 1; turn <= 3; ++turn) {
    outputs.push_back(log_output("out" + std::to_string(turn), 12000));
    auto body = nlohmann::json::parse(body_of("chat", outputs, "read each new output once"));
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body.dump()).status == 200);
  }
  const auto hops = upstream.llm_bodies().size();
  REQUIRE(hops == 6);  // each turn: the client's request and one page-in hop
  const std::string with = R"(gistproxy_ledger_input_tokens_total{api="chat",side="with"})";
  const auto metrics = metrics_with(proxy.admin_port(), {with + " " + std::to_string(100 * hops)});
  CHECK(series_value(metrics, with) == double(100 * hops));
  CHECK(series_sum(metrics, "gistproxy_unmeasured_requests_total", R"(api="chat")") == 0);
}

TEST_CASE("ledger: each key's requests are its tenant's row and the rows add up to the counters") {
  mock_upstream upstream;
  const auto spans = temp_path("ledger-tenant-spans.jsonl");
  proxy_process proxy({"--upstream", upstream.url(), "--span-log", spans.string()});
  const std::map<std::string, std::string> keys[] = {{{"Authorization", "Bearer sk-ledger-one"}},
                                                     {{"Authorization", "Bearer sk-ledger-two"}}};
  std::vector<std::string> outputs;
  for (int turn = 1; turn <= 3; ++turn) {
    outputs.push_back(log_output("out" + std::to_string(turn), 12000));
    for (int key = 0; key < 2; ++key) {
      // The second key's model re-reads: its row must not borrow the first's savings.
      const auto ask = key == 0 ? "bill by size and answer" : "bill by size and reread everything";
      const auto body = body_of("chat", outputs, ask);
      REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body, keys[key]).status == 200);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  nlohmann::json t;
  auto requests_in = [](const nlohmann::json& j) {
    std::uint64_t n = 0;
    for (const auto& r : j["tenants"]) n += r["requests"].get<std::uint64_t>();
    return n;
  };
  do {  // /api/tenants takes what finished at the admin thread's tick
    t = nlohmann::json::parse(http_request(proxy.admin_port(), "GET", "/api/tenants").body);
    if (requests_in(t) == 6) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  REQUIRE(t["tenants"].size() == 2);
  REQUIRE(requests_in(t) == 6);
  const auto metrics = http_request(proxy.admin_port(), "GET", "/metrics").body;
  const double without = series_sum(metrics, "gistproxy_ledger_input_tokens_total", R"(side="without")");
  const double with = series_sum(metrics, "gistproxy_ledger_input_tokens_total", R"(side="with")");
  double rows_without = 0, rows_with = 0;
  for (const auto& r : t["tenants"]) {
    CHECK(r["requests"] == 3);
    CHECK(r["tenant"].get<std::string>().size() == 16);  // the store's tenant name
    rows_without += r["input_tokens_without"].get<double>();
    rows_with += r["input_tokens_with"].get<double>();
  }
  CHECK(rows_without == without);
  CHECK(rows_with == with);
  // Ordered by what they saved: the model that never reads back first.
  CHECK(t["tenants"][0]["tokens_saved"].get<double>() > t["tenants"][1]["tokens_saved"].get<double>());
  const auto text = t.dump();
  CHECK(text.find("sk-ledger") == std::string::npos);  // never a credential
  // `gistproxy report` finds the same rows in the span log.
  REQUIRE(proxy.stop() == 0);  // flushes the span log
  const auto report = run_command({gistproxy_binary(), "report", "--json", spans.string()});
  INFO(report.output);
  const auto by_tenant = nlohmann::json::parse(report.output)["by_tenant"];
  REQUIRE(by_tenant.size() == 2);
  for (const auto& row : t["tenants"]) {
    const auto& name = row["tenant"].get<std::string>();
    REQUIRE(by_tenant.contains(name));
    CHECK(by_tenant[name]["requests"] == row["requests"]);
    CHECK(by_tenant[name]["input_tokens_without"] == row["input_tokens_without"]);
    CHECK(by_tenant[name]["input_tokens_with"] == row["input_tokens_with"]);
    CHECK(by_tenant[name]["usd_saved"].get<double>() == Approx(row["net_saved_usd"].get<double>()).margin(1e-9));
  }
  std::ifstream log(spans);
  const std::string logged((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK(logged.find("sk-ledger") == std::string::npos);
}
