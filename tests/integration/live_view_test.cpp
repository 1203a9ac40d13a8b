// The admin listener's live view against the real binary under the planted
// operators' workload: its totals are /metrics' totals, its conversations
// show the churn and the integrity failure `gistproxy report` finds, and
// neither page nor API ever carries a tool output's bytes, a prompt, an API
// key or a tenant hash; the token rule holds.
#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <thread>

#include "rewrite/offload/engine.hpp"
#include "rewrite/text/utf8.hpp"
#include "tests/integration/operators_workload.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/tool_conversation.hpp"

using namespace gistproxy::testing;

namespace {

// The sum of every series of a metric in Prometheus text (those whose
// labels contain `label`, when given).
double metric_sum(const std::string& text, const std::string& name, const std::string& label = "") {
  double sum = 0;
  std::regex line("^" + name + R"((\{[^}]*\})? ([0-9.e+-]+)$)");
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line) && m[1].str().find(label) != std::string::npos) sum += std::stod(m[2]);
  }
  return sum;
}

nlohmann::json get_json(std::uint16_t port, const std::string& target) {
  auto r = http_request(port, "GET", target);
  INFO(target << ": " << r.status << " " << r.body);
  REQUIRE(r.status == 200);
  return nlohmann::json::parse(r.body);
}

// Waits (bounded) until the live view has taken in every finished request.
nlohmann::json summary_caught_up(std::uint16_t admin) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    auto s = get_json(admin, "/api/summary");
    auto metrics = http_request(admin, "GET", "/metrics").body;
    if (s["requests"].get<double>() == metric_sum(metrics, "gistproxy_requests_total") || std::chrono::steady_clock::now() > deadline)
      return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

TEST_CASE("the live view's totals are /metrics' totals and its conversations show the planted churn and integrity failure") {
  operators_workload w;
  REQUIRE(w.run().empty());
  const auto admin = w.proxy.admin_port();
  auto s = summary_caught_up(admin);
  const auto metrics = http_request(admin, "GET", "/metrics").body;
  CHECK(s["requests"].get<double>() == metric_sum(metrics, "gistproxy_requests_total"));
  CHECK(s["offloads"].get<double>() == metric_sum(metrics, "gistproxy_offloads_total"));
  CHECK(s["page_ins"].get<double>() == metric_sum(metrics, "gistproxy_page_ins_total"));
  CHECK(s["churn"].get<double>() == metric_sum(metrics, "gistproxy_paging_churn_total"));
  CHECK(s["integrity_failures"].get<double>() == metric_sum(metrics, "gistproxy_integrity_failures_total"));
  CHECK(s["input_tokens"].get<double>() == metric_sum(metrics, "gistproxy_input_tokens_total"));
  CHECK(s["offloaded_tokens"].get<double>() == metric_sum(metrics, "gistproxy_offload_tokens_before_total") -
                                                   metric_sum(metrics, "gistproxy_offload_tokens_after_total"));
  CHECK(s["tokens_saved"].get<double>() == metric_sum(metrics, "gistproxy_ledger_input_tokens_total", R"(side="without")") -
                                               metric_sum(metrics, "gistproxy_ledger_input_tokens_total", R"(side="with")"));
  CHECK(s["rewrite_failures"]["unparsable"].get<double>() > 0);
  CHECK(s["groups"].contains("control"));
  CHECK(s["churn"].get<double>() >= 2);
  CHECK(s["integrity_failures"].get<double>() >= 1);

  // The join: the churned blob is marked in its conversation, the corrupted one fails integrity.
  auto list = get_json(admin, "/api/conversations")["conversations"];
  REQUIRE(list.size() >= 5);
  std::uint64_t churn_marked = 0, integrity_marked = 0, churn_total = 0;
  for (const auto& c : list) {
    churn_total += c["churn"].get<std::uint64_t>();
    auto detail = get_json(admin, "/api/conversations/" + c["trace_id"].get<std::string>());
    for (const auto& t : detail["turns_detail"])
      for (const auto& p : t["page_ins"]) {
        if (p["churn"] == true && p["handle"] == w.churned_handle) ++churn_marked;
        if (p["integrity_ok"] == false && p["handle"] == w.corrupted_handle) ++integrity_marked;
      }
  }
  CHECK(churn_marked == 2);  // the turn that offloaded it and the next
  CHECK(integrity_marked == 1);
  CHECK(double(churn_total) == s["churn"].get<double>());
  CHECK(list[0]["last_seen_unix_ms"] >= list[list.size() - 1]["last_seen_unix_ms"]);  // newest first

  // Hostile paths: 404, never a file or another route.
  CHECK(http_request(admin, "GET", "/api/conversations/" + std::string(32, 'A')).status == 404);
  CHECK(http_request(admin, "GET", "/api/conversations/../../etc/passwd").status == 404);
  CHECK(http_request(admin, "GET", "/api/conversations/" + std::string(32, '0')).status == 404);
}

TEST_CASE("the live view's page and API never carry a tool output's bytes, a prompt, an API key or a tenant hash") {
  operators_workload w;
  REQUIRE(w.run().empty());
  const auto admin = w.proxy.admin_port();
  summary_caught_up(admin);
  std::string everything = http_request(admin, "GET", "/").body + http_request(admin, "GET", "/api/summary").body;
  auto list = http_request(admin, "GET", "/api/conversations").body;
  everything += list;
  const auto parsed = nlohmann::json::parse(list);
  for (const auto& c : parsed["conversations"])
    everything += http_request(admin, "GET", "/api/conversations/" + c["trace_id"].get<std::string>()).body;
  REQUIRE(everything.find(w.churned_handle) != std::string::npos);  // handles are shown: the probe reads real answers
  const std::vector<std::string> planted = {
      "NEEDLE port=48213",                                  // inside every planted tool output
      "alpha1 line 7: key_7=",                               // the churned output's bytes
      "delta1 line 1500",                                    // the corrupted one's
      "find the needle in the config",                       // a prompt
      "control conversation",                                // another prompt
      "sk-ops",                                              // the API key
      gistproxy::rewrite::tenant_of("Bearer sk-ops"),       // its tenant hash
      gistproxy::rewrite::tenant_of("Bearer sk-ops").substr(0, 16),
      gistproxy::rewrite::tenant_of("sk-ops").substr(0, 16),
  };
  for (const auto& p : planted) {
    INFO(p);
    CHECK(everything.find(p) == std::string::npos);
  }
}

TEST_CASE("with an admin token the page and API answer 401 without it, and /metrics stays open") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--admin-token", "t0k-live"});
  const auto admin = proxy.admin_port();
  for (const std::string& target : std::vector<std::string>{"/", "/api/summary", "/api/conversations",
                                                             "/api/conversations/" + std::string(32, 'a')}) {
    INFO(target);
    CHECK(http_request(admin, "GET", target).status == 401);
    CHECK(http_request(admin, "GET", target, {}, {{"Authorization", "Bearer wrong"}}).status == 401);
  }
  CHECK(http_request(admin, "GET", "/", {}, {{"Authorization", "Bearer t0k-live"}}).status == 200);
  CHECK(http_request(admin, "GET", "/?token=t0k-live").status == 200);
  CHECK(http_request(admin, "GET", "/api/summary", {}, {{"Authorization", "Bearer t0k-live"}}).status == 200);
  CHECK(http_request(admin, "GET", "/metrics").status == 200);
  CHECK(proxy.log().find("t0k-live") == std::string::npos);  // the token is never logged
}

TEST_CASE("serve refuses to start with a non-loopback admin listener and no admin token") {
  auto out = run_command({gistproxy_binary(), "serve", "--listen", "127.0.0.1:0", "--admin-listen", "0.0.0.0:0"});
  CHECK(out.exit_code == 2);
  CHECK(out.output.find("--admin-token") != std::string::npos);
}

TEST_CASE("make run's first log line names the live view's URL") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  auto log = proxy.log();
  auto first = log.substr(0, log.find('\n'));
  INFO(first);
  CHECK(first.find("\"msg\":\"live view\"") != std::string::npos);
  CHECK(first.find("\"url\":\"http://127.0.0.1:" + std::to_string(proxy.admin_port()) + "/\"") != std::string::npos);
}

namespace {

// A chat turn whose model and tool name are raw bytes (spliced into the JSON
// unescaped, as a hostile client sends them), with a 100 KB output to offload.
std::string chat_with_raw_names(const std::string& ask, const std::string& model, const std::string& tool) {
  std::string output;
  for (int i = 0; output.size() < 100 * 1024; ++i) output += "line " + std::to_string(i) + ": value=" + std::to_string(i * 31) + "\n";
  nlohmann::json j = {{"model", "@MODEL@"},
                      {"messages", {{{"role", "user"}, {"content", ask}},
                                    {{"role", "assistant"}, {"tool_calls", {{{"id", "c1"}, {"type", "function"},
                                                                              {"function", {{"name", "@TOOL@"}, {"arguments", "{}"}}}}}}},
                                    {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", output}}}},
                      {"tools", {{{"type", "function"}, {"function", {{"name", "@TOOL@"}}}}}}};
  std::string body = j.dump();
  for (const auto& [mark, value] : {std::pair<std::string, std::string>{"@MODEL@", model}, {"@TOOL@", tool}})
    for (auto at = body.find(mark); at != std::string::npos; at = body.find(mark, at + value.size()))
      body.replace(at, mark.size(), value);
  return body;
}

bool valid_utf8(const std::string& s) { return gistproxy::rewrite::text::is_valid_utf8(s); }

}  // namespace

TEST_CASE("a model or tool name of invalid UTF-8, or cut through a character, never blanks the live view") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "always"});  // every output offloaded
  const std::string euro = "\xE2\x82\xAC";  // three bytes: a 64-byte cut of "ab" + euros splits one
  std::string cut_model = "ab", long_tool;
  for (int i = 0; i < 30; ++i) cut_model += euro;
  for (int i = 0; i < 60; ++i) long_tool += euro;
  const std::vector<std::pair<std::string, std::string>> turns = {
      {cut_model, long_tool},                        // valid UTF-8, cut by the view's bounds
      {"gpt-\xFF\xFE-x", "run_\xC3(\xED\xA0\x80)"},  // invalid bytes, a truncated sequence, a surrogate
      {"gpt-4o", std::string(1 << 20, 't')},         // a megabyte tool name
  };
  int n = 0;
  for (const auto& [model, tool] : turns) {
    auto r = http_request(proxy.port(), "POST", "/v1/chat/completions",
                          chat_with_raw_names("raw names " + std::to_string(++n), model, tool), {{"Authorization", "Bearer sk-raw"}});
    INFO(r.status << " " << r.body.substr(0, 200));
    CHECK(r.status > 0);
  }
  const auto admin = proxy.admin_port();
  nlohmann::json list;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {  // the view takes events in every second: wait (bounded) for all three
    auto r = http_request(admin, "GET", "/api/conversations");
    REQUIRE(r.status == 200);  // before: the answer's dump() threw and the connection closed unanswered
    REQUIRE(valid_utf8(r.body));
    list = nlohmann::json::parse(r.body)["conversations"];
    if (list.size() >= turns.size()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  REQUIRE(list.size() == turns.size());
  std::set<std::string> models;
  std::size_t tools_seen = 0;
  for (const auto& c : list) {
    models.insert(c["model"].get<std::string>());
    CHECK(c["model"].get<std::string>().size() <= 64);
    auto detail = http_request(admin, "GET", "/api/conversations/" + c["trace_id"].get<std::string>());
    REQUIRE(detail.status == 200);
    REQUIRE(valid_utf8(detail.body));
    const auto parsed = nlohmann::json::parse(detail.body);  // named: a range-for over a temporary's member dangles
    for (const auto& t : parsed["turns_detail"])
      for (const auto& o : t["new_offloads"]) {
        ++tools_seen;
        CHECK(o["tool"].get<std::string>().size() <= 128);  // a megabyte name is kept as 128 bytes
      }
  }
  // The cut falls before the character it would split and says so; the invalid bytes are U+FFFD.
  std::string cut_shown = "ab";
  for (int i = 0; i < 19; ++i) cut_shown += euro;
  CHECK(models.count(cut_shown + "\xE2\x80\xA6") == 1);
  CHECK(models.count("gpt-\xEF\xBF\xBD\xEF\xBF\xBD-x") == 1);
  CHECK(tools_seen >= 2);
  auto summary = nlohmann::json::parse(http_request(admin, "GET", "/api/summary").body);
  CHECK(summary["dropped"]["text_cut"].get<std::uint64_t>() >= 2);
  CHECK(summary["dropped"]["text_repaired"].get<std::uint64_t>() >= 1);
  CHECK(http_request(admin, "GET", "/healthz").status == 200);
}

TEST_CASE("the live view shows the outputs a re-reading conversation keeps inline and its paging churn") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url()});
  std::vector<std::string> outputs;
  for (int turn = 1; turn <= 4; ++turn) {  // the scripted model pages every reference back, every turn
    outputs.push_back(log_output("out" + std::to_string(turn), 12000));
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body_of("chat", outputs, "reread everything you offload"),
                         {{"Authorization", "Bearer sk-live"}})
                .status == 200);
  }
  const auto admin = proxy.admin_port();
  nlohmann::json list;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {  // the view takes events in every second: wait (bounded) for the fourth turn
    list = get_json(admin, "/api/conversations")["conversations"];
    if (list.size() == 1 && list[0]["turns"] == 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  REQUIRE(list.size() == 1);
  REQUIRE(list[0]["turns"] == 4);
  const auto s = summary_caught_up(admin);
  const auto metrics = http_request(admin, "GET", "/metrics").body;
  // Turn 2 tells a re-reader; turns 3 and 4 keep all their outputs inline.
  CHECK(metric_sum(metrics, "gistproxy_outputs_kept_inline_total") == 3 + 4);
  CHECK(s["kept_inline_churn"].get<double>() == 3 + 4);
  const auto& c = list[0];
  CHECK(c["kept_inline"] == 3 + 4);
  CHECK(c["churn"].get<double>() == metric_sum(metrics, "gistproxy_paging_churn_total"));
  CHECK(c["churn"] >= 2);  // output 1 paged on its own turn and the next, output 2 on its own
  const auto detail = get_json(admin, "/api/conversations/" + c["trace_id"].get<std::string>());
  std::vector<std::uint64_t> kept;
  for (const auto& t : detail["turns_detail"]) kept.push_back(t["kept_inline"].get<std::uint64_t>());
  CHECK(kept == std::vector<std::uint64_t>{0, 0, 3, 4});
  const auto page = http_request(admin, "GET", "/").body;  // the page renders the figures it is given
  CHECK(page.find("kept-inline") != std::string::npos);
  CHECK(page.find("c.kept_inline") != std::string::npos);
  CHECK(page.find("t.kept_inline") != std::string::npos);
}
