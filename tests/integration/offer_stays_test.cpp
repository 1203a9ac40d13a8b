// --inject-read-blob=auto through the real binary: a client that clears a
// large output on its next turn (as agents clear old results) keeps
// read_blob in the tools it forwards from the first offer on, on every API,
// and gistproxy breaks no cached prefix doing so.
#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"
#include "tests/support/tool_conversation.hpp"

using namespace gistproxy::testing;

namespace {

// Turn `turn` of twelve: one output each; turn 2's is large, and the client
// cleared it from turn 3 on.
std::vector<std::string> outputs_of_turn(int turn) {
  std::vector<std::string> outs;
  for (int i = 1; i <= turn; ++i)
    outs.push_back(i == 2 ? (turn == 2 ? log_output("big", 40000) : "[output cleared]") : "ok " + std::to_string(i));
  return outs;
}

std::string series(const std::string& name, const std::string& api, const std::string& labels) {
  return name + "{api=\"" + api + "\"," + labels + "}";
}

}  // namespace

TEST_CASE("read_blob never leaves the tools once offered when the client clears the output that paid for it") {
  const std::string api = GENERATE(as<std::string>{}, "chat", "responses", "messages", "gemini", "bedrock-converse");
  CAPTURE(api);
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--inject-read-blob", "auto"});
  const std::string shape = api == "bedrock-converse" ? "converse" : api;
  for (int turn = 1; turn <= 12; ++turn)
    REQUIRE(http_request(proxy.port(), "POST", path_for(api), body_of(shape, outputs_of_turn(turn)), key_header(api)).status == 200);
  const auto seen = upstream.llm_bodies();
  REQUIRE(seen.size() == 12);  // the plain answers call no read_blob: one hop a turn
  std::vector<bool> offered;
  for (const auto& body : seen) offered.push_back(body.find("read_blob") != std::string::npos);
  CHECK(offered == std::vector<bool>{false, true, true, true, true, true, true, true, true, true, true, true});

  const auto offers = series("gistproxy_read_blob_offers_total", api, "decision=\"offered_before\"");
  const auto metrics = metrics_with(proxy.admin_port(), {offers + " 10"});
  CHECK(series_value(metrics, offers) == 10);
  // The client broke its own prefix once (turn 3 cleared an output); read_blob's
  // arrival on turn 2 was the cost model's plan; nothing else broke it.
  const auto breaks = [&](const std::string& cause) {
    return series_value(metrics, series("gistproxy_prefix_breaks_total", api, "cause=\"" + cause + "\",group=\"treated\""));
  };
  CHECK(breaks("client") == 1);
  CHECK(breaks("offer") == 1);
  CHECK(breaks("proxy") == 0);
}
