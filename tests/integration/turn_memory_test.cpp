// The turn memory through the real binary: a conversation that grows (and is
// edited mid-way) forwards exactly the same bytes upstream with the memory on
// as with it off (--turn-memory 0), turn after turn, and the memory reports
// the bytes it found shared.
#include <catch2/catch.hpp>

#include <random>

#include "tests/integration/harness.hpp"
#include "tests/rewrite/turn_memory/conversation_bodies.hpp"

using namespace gistproxy::testing;

namespace {

// The upstream bodies of a conversation sent through one proxy.
std::vector<std::string> forwarded(const std::vector<std::string>& bodies, const std::vector<std::string>& extra,
                                   std::string* metrics = nullptr) {
  mock_upstream upstream;
  std::vector<std::string> args = {"--upstream", upstream.url(), "--threshold-tokens", "300"};
  args.insert(args.end(), extra.begin(), extra.end());
  proxy_process proxy(args);
  for (const auto& body : bodies)
    REQUIRE(http_request(proxy.port(), "POST", "/v1/chat/completions", body, {{"Authorization", "Bearer sk-conv"}})
                .status == 200);
  if (metrics) *metrics = metrics_with(proxy.admin_port(), {"gistproxy_turn_memory_bytes_total{api=\"chat\",part=\"shared\"}"});
  return upstream.llm_bodies();
}

}  // namespace

TEST_CASE("a growing, edited conversation forwards the same bytes with the turn memory as without it") {
  conversation conv("chat", 11);
  std::mt19937 rng(17);
  std::vector<std::string> bodies;
  while (bodies.size() < 40) {
    conv.grow_or_edit(rng);
    auto body = conv.body();
    if (body.size() >= 20 * 1024) bodies.push_back(std::move(body));  // the memory keeps bodies of 16 KB and more
  }
  std::string metrics;
  const auto with_memory = forwarded(bodies, {}, &metrics);
  const auto without = forwarded(bodies, {"--turn-memory", "0"});
  REQUIRE(with_memory.size() == bodies.size());
  REQUIRE(without.size() == bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    INFO("turn " << i);
    CHECK(with_memory[i] == without[i]);
  }
  CHECK(with_memory.back() != bodies.back());  // outputs were offloaded: the rewrite path, not a pass-through
  // Most of each turn's bytes were the previous turn's.
  const auto at = metrics.find("gistproxy_turn_memory_bytes_total{api=\"chat\",part=\"shared\"} ");
  REQUIRE(at != std::string::npos);
  const double shared = std::stod(metrics.substr(at + std::string_view("gistproxy_turn_memory_bytes_total{api=\"chat\",part=\"shared\"} ").size()));
  std::size_t total = 0;
  for (const auto& b : bodies) total += b.size();
  CHECK(shared > 0.5 * double(total));
}
