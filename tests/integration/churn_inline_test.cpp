// Paging churn that acts, through the real binary: a scripted model that
// reads every offloaded output back, whole, on every turn. Outputs read back
// on more than two turns go back inline, in one planned break a turn; the
// conversation, which keeps churning, stops offloading what it never did;
// and it costs little more than --offload off, where before it cost several
// times as much (measured on twelve turns: cache priced 4.6x -> 1.9x, bytes
// forwarded 1.59x -> 1.21x, hops 24 -> 18, on each API).
#include <catch2/catch.hpp>

#include "rewrite/dialect.hpp"
#include "rewrite/prompt_cache/prefix_fingerprint.hpp"
#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/tool_conversation.hpp"

using namespace gistproxy::testing;

namespace {

struct conversation_cost {
  std::uint64_t bytes = 0;  // every body sent upstream, every hop
  double priced = 0;        // the same, cache priced: bytes a provider reads from its prompt cache at 0.1
  std::size_t hops = 0;
  std::string metrics;
};

// What the bodies cost, in bytes at the input price, with a provider's prompt
// cache: each body's prefix that an earlier body of the conversation sent
// (in the API's cache order: tools, system, then items up to the first
// change) is read at 0.1, the rest written at 1.
double cache_priced(const std::string& api, const std::vector<std::string>& bodies) {
  const auto layout = gistproxy::rewrite::dialect_named(api)->cache_prefix();
  std::vector<gistproxy::rewrite::prefix_parts> seen;
  double cost = 0;
  for (const auto& body : bodies) {
    auto parts = gistproxy::rewrite::split_prefix(body, layout);
    REQUIRE(parts);
    std::uint64_t cached = 0;
    for (const auto& earlier : seen)
      cached = std::max(cached, gistproxy::rewrite::shared_prefix(earlier, *parts, [](auto r) { return std::uint64_t(r.size()); }));
    cached = std::min<std::uint64_t>(cached, body.size());
    cost += 0.1 * double(cached) + double(body.size() - cached);
    seen.push_back(std::move(*parts));
  }
  return cost;
}

// Twelve turns, each adding a ~12 KB output (over the 2,500-token threshold).
conversation_cost run_conversation(const std::string& api, std::vector<std::string> flags) {
  mock_upstream upstream;
  std::vector<std::string> args{"--upstream", upstream.url()};
  args.insert(args.end(), flags.begin(), flags.end());
  proxy_process proxy(args);
  const std::string shape = api == "bedrock-converse" ? "converse" : api;
  std::vector<std::string> outputs;
  for (int turn = 1; turn <= 12; ++turn) {
    outputs.push_back(log_output("out" + std::to_string(turn), 12000));
    const auto body = body_of(shape, outputs, "reread everything you offload");
    REQUIRE(http_request(proxy.port(), "POST", path_for(api), body, key_header(api)).status == 200);
  }
  conversation_cost c;
  const auto bodies = upstream.llm_bodies();
  for (const auto& b : bodies) c.bytes += b.size(), ++c.hops;
  c.priced = cache_priced(api, bodies);
  c.metrics = metrics_with(proxy.admin_port(), {"gistproxy_requests_total"});
  return c;
}

std::string series(const std::string& name, const std::string& api, const std::string& labels) {
  return name + "{api=\"" + api + "\"," + labels + "}";
}

}  // namespace

TEST_CASE("a model that reads every offloaded output back every turn gets them inline and costs about --offload off") {
  const std::string api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini", "bedrock-converse");
  CAPTURE(api);
  const auto off = run_conversation(api, {"--offload", "off"});
  const auto before = run_conversation(api, {"--churn-max-read-backs", "0"});  // churn counted, nothing acts
  const auto after = run_conversation(api, {});
  const double priced_before = before.priced / off.priced, priced_after = after.priced / off.priced;
  const double bytes_before = double(before.bytes) / double(off.bytes), bytes_after = double(after.bytes) / double(off.bytes);
  CAPTURE(priced_before, priced_after, bytes_before, bytes_after, before.hops, after.hops);
  CHECK(off.hops == 12);
  CHECK(priced_before > 2.5);  // the problem: every page written again on every turn
  // Twelve turns, six of them learning (each output is read back on three
  // turns before it goes inline); every later turn costs what --offload off does.
  CHECK(priced_after < priced_before / 2);
  CHECK(bytes_after <= 1.3);
  CHECK(after.hops < before.hops);  // the page-in hops stop once the outputs are inline

  const auto kept = series_value(after.metrics, series("gistproxy_outputs_kept_inline_total", api, "cause=\"churn\""));
  CHECK(kept > 0);
  CHECK(series_value(before.metrics, series("gistproxy_outputs_kept_inline_total", api, "cause=\"churn\"")) == 0);
  const auto breaks = [&](const std::string& cause) {
    return series_value(after.metrics, series("gistproxy_prefix_breaks_total", api, "cause=\"" + cause + "\",group=\"treated\""));
  };
  CHECK(breaks("churn") >= 1);  // switching back inline is a planned break
  CHECK(breaks("proxy") == 0);
  CHECK(breaks("client") == 0);
}
