// Replay decides paging churn as serve did, where the trace says what the
// model read back: serve --record keeps each exchange's read-backs (handles
// only), and replay tells its churn tracker of them as serve told its own, so
// the outputs serve put back inline for a re-reader are inline in replay too.
#include <catch2/catch.hpp>

#include <fstream>

#include "proxy/commands/wiring.hpp"
#include "proxy/runtime/config.hpp"
#include "rewrite/blob/memory_blob_store.hpp"
#include "rewrite/replay/replay_run.hpp"
#include "tests/integration/harness.hpp"
#include "tests/integration/replay_as_serve.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/tool_conversation.hpp"

using namespace gistproxy::testing;
namespace gp = gistproxy;

namespace {

// Twelve turns of a model that reads every offloaded output back every turn,
// through serve --record; returns the recording's text and serve's count of
// outputs kept inline for churn.
std::pair<std::string, double> record_rereader(const std::string& api) {
  const auto file = temp_path("rereader-" + api + ".jsonl");
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--record", file.string()});
  std::vector<std::string> outputs;
  for (int turn = 1; turn <= 12; ++turn) {
    outputs.push_back(log_output("out" + std::to_string(turn), 12000));
    REQUIRE(http_request(proxy.port(), "POST", path_for(api), body_of(api, outputs, "reread everything you offload"),
                         key_header(api)).status == 200);
  }
  const std::string kept = "gistproxy_outputs_kept_inline_total{api=\"" + api + "\",cause=\"churn\"}";
  const auto metrics = metrics_with(proxy.admin_port(), {kept});
  REQUIRE(proxy.stop() == 0);  // the record writer drains before exit
  std::ifstream in(file);
  return {std::string(std::istreambuf_iterator<char>(in), {}), series_value(metrics, kept)};
}

struct replayed {
  std::size_t turns = 0, same_as_serve = 0;
  gp::rewrite::replay_stats stats;
};

// Replays a recording with serve's defaults; counts the turns whose forwarded
// body is byte for byte the one serve forwarded.
replayed replay(const std::string& text) {
  auto trace = gp::rewrite::read_trace(text);
  REQUIRE(trace.format == "gistproxy-recording");
  replayed out;
  out.stats = replay_as_serve(trace, [&](const gp::rewrite::replayed_request& r) {
    const auto& serve = r.recorded->forwarded.empty() ? r.recorded->body() : r.recorded->forwarded;
    ++out.turns;
    if (r.forwarded == serve) ++out.same_as_serve;
  });
  return out;
}

// The recording with its read-backs taken out: a trace that does not say
// what the model read.
std::string without_read_backs(const std::string& text) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    auto line = nlohmann::json::parse(text.substr(at, end - at));
    line.erase("read_backs");
    out += line.dump() + "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("replay of a recorded re-reader keeps inline what serve kept inline, byte for byte", "[replay][churn]") {
  const std::string api = GENERATE(as<std::string>{}, "chat", "messages");
  CAPTURE(api);
  const auto [recording, serve_kept] = record_rereader(api);
  REQUIRE(serve_kept == 75);  // turn t (3..12) keeps its t outputs inline
  const auto told = replay(recording);
  CHECK(told.turns == 12);
  CHECK(told.same_as_serve == 12);
  // Output 1 read back on turns 1 and 2, output 2 on turn 2; then inline.
  CHECK(told.stats.recorded_read_backs == 3);
  CHECK(double(told.stats.kept_inline_churn) == serve_kept);
  // Without them replay cannot know: it offloads every output on every turn,
  // as serve would for a model that never read back.
  const auto untold = replay(without_read_backs(recording));
  CHECK(untold.stats.recorded_read_backs == 0);
  CHECK(untold.stats.kept_inline_churn == 0);
  CHECK(untold.same_as_serve == 2);  // the turns before churn acted
  CHECK(untold.stats.tokens_after < told.stats.tokens_after);
}

TEST_CASE("replay counts a recording's page-in hops in what gistproxy sends, read-backs included", "[replay][ledger]") {
  const auto recording = record_rereader("chat").first;
  const auto told = replay(recording);
  CHECK(told.stats.recorded_page_in_hops == 2);  // turns 1 and 2; then the outputs are inline
  // Each hop sends the forwarded body again plus the outputs it read back
  // (three reads of outputs over the offload threshold, 2,500 tokens each).
  CHECK(told.stats.page_in_input_tokens > 3 * 2500);
  const auto untold = replay(without_read_backs(recording));
  CHECK(untold.stats.page_in_input_tokens > 0);
  CHECK(untold.stats.tokens_after > untold.stats.page_in_input_tokens);
}
