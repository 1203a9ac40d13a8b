// The store as a shared resource, through the real binary: past
// --store-max-bytes new offloads stay inline (fail-open, counted).
#include <catch2/catch.hpp>

#include "tests/integration/harness.hpp"
#include "tests/support/api_scenarios.hpp"

using namespace gistproxy::testing;
namespace fs = std::filesystem;

namespace {

std::size_t stored_blobs(const fs::path& store) {
  std::size_t n = 0;
  if (!fs::exists(store)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(store)) n += e.path().extension() == ".blob";
  return n;
}

}  // namespace

TEST_CASE("past --store-max-bytes an output stays inline: forwarded as sent and counted as store_full") {
  mock_upstream upstream;
  proxy_process proxy({"--upstream", upstream.url(), "--store-max-bytes", "1KiB"});
  auto res = http_request(proxy.port(), "POST", path_for("chat"), request_for("chat", "hello", haystack()).dump(),
                          key_header("chat"));
  REQUIRE(res.status == 200);  // fail-open: the client never hears of it
  REQUIRE(upstream.llm_bodies().size() == 1);
  CHECK(upstream.llm_bodies()[0].find("NEEDLE secret_port=48213") != std::string::npos);  // was: offloaded past any bound
  CHECK(stored_blobs(proxy.store_dir()) == 0);
  const std::string counted = "gistproxy_rewrite_failures_total{api=\"chat\",reason=\"store_full\"} 1";
  CHECK(metrics_with(proxy.admin_port(), {counted}).find(counted) != std::string::npos);
}
